/// Whether a request's path is spelled the one way the router and the route table read it.
///
/// The router drops empty segments and never decodes, so `//v1/receipts`, `/v1//users/u/consent`
/// and `/v1/./receipts` would reach the same handlers as their plain spellings, and a proxy that
/// normalises `.`, `..`, `%2F` or `\` routes them somewhere else again. Rather than normalise (and
/// have two readers disagree), every other spelling is refused before any handler: `400 bad_path`.
enum CanonicalPath {
    /// Why `path` is not canonical, or `nil` when it is. Refused: a byte outside printable ASCII,
    /// a raw `\`, an empty, `.` or `..` segment (a trailing `/` included), a `%` not followed by
    /// two hex digits, and a percent-encoded unreserved character (RFC 3986 §2.3: letters, digits,
    /// `-`, `.`, `_`, `~`) or `/`, which have one spelling only: themselves.
    static func problem(in path: String) -> String? {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return "the path must start with /" }
        if bytes.count == 1 { return nil }
        var segmentStart = 1
        var index = 1
        while index <= bytes.count {
            if index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                if let problem = segmentProblem(bytes[segmentStart..<index]) { return problem }
                segmentStart = index + 1
            }
            index += 1
        }
        return nil
    }

    private static func segmentProblem(_ segment: ArraySlice<UInt8>) -> String? {
        if segment.isEmpty { return "the path has an empty segment (// or a trailing /)" }
        if segment.elementsEqual(".".utf8) || segment.elementsEqual("..".utf8) { return "the path has a . or .. segment" }
        var index = segment.startIndex
        while index < segment.endIndex {
            let byte = segment[index]
            guard byte > 0x20 && byte < 0x7F else { return "the path has a byte outside printable ASCII" }
            if byte == UInt8(ascii: "\\") { return "the path has a \\" }
            if byte == UInt8(ascii: "%") {
                guard index + 2 < segment.endIndex, let high = hexValue(segment[index + 1]), let low = hexValue(segment[index + 2]) else {
                    return "the path has a % not followed by two hex digits"
                }
                let decoded = high << 4 | low
                if decoded == UInt8(ascii: "/") || isUnreserved(decoded) {
                    return "the path percent-encodes a character that has one spelling only (/, a letter, a digit, - . _ ~)"
                }
                index += 3
                continue
            }
            index += 1
        }
        return nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
        }
    }
}

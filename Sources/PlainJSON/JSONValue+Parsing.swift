extension JSONValue {
    /// Nesting deeper than this is refused rather than read on the stack.
    public static let maxDepth = 64

    /// Reads one JSON document (RFC 8259); anything but whitespace after it is an error.
    public init(parsing text: String) throws(JSONParseError) {
        var text = text
        // `withUTF8` rethrows untyped errors: the typed one is carried out (see `TypedFailure`).
        var failure = TypedFailure<JSONParseError>()
        let value = text.withUTF8 { bytes in failure.catching { () throws(JSONParseError) in try JSONValue(parsing: bytes) } }
        try self = failure.value(value)
    }

    public init(parsing bytes: [UInt8]) throws(JSONParseError) {
        var failure = TypedFailure<JSONParseError>()
        let value = bytes.withUnsafeBufferPointer { buffer in failure.catching { () throws(JSONParseError) in try JSONValue(parsing: buffer) } }
        try self = failure.value(value)
    }

    public init(parsing buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) {
        var reader = JSONReader(buffer)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == buffer.count else { throw reader.error("text after the document") }
        self = value
    }
}

extension JSONValue {
    /// Reads one JSON object and hands `body` each member as it is read, without building the
    /// object: for a payload read once into its fields (a signed transaction), where building a
    /// dictionary and looking every field up again was most of the reading. Each name is handed
    /// over as its UTF-8 bytes (escapes read; valid during the call only): no String is made for
    /// it, and a caller matches names by their bytes. A name that comes twice is handed over
    /// twice; anything but an object, or after it, is an error.
    public static func forEachMember(
        parsing bytes: [UInt8], _ body: (UnsafeBufferPointer<UInt8>, JSONValue) throws -> Void
    ) throws {
        var failure: (any Error)?
        try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            var reader = JSONReader(buffer)
            reader.skipWhitespace()
            try reader.members(depth: 1) { name, value throws(JSONParseError) in
                guard failure == nil else { return }
                do { try body(name, value) } catch { failure = error }
            }
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.error("text after the document") }
        }
        if let failure { throw failure }
    }
}

/// A recursive-descent reader over UTF-8 bytes.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    func error(_ reason: String) -> JSONParseError {
        JSONParseError(offset: index, reason: reason)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected character")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw error("unexpected end") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw error("unknown literal")
        }
        index += count
    }

    private mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        // Room for a job's or a transaction's members at once. A later member of a name replaces
        // the earlier one (in its place).
        var members = JSONObject()
        try self.members(depth: depth) { name, value in
            if members.isEmpty { members.reserveCapacity(16) }
            members.set(name: name, value)
        }
        return .object(members)
    }

    /// An object's members, each handed over as it is read (a later one of the same name after
    /// it), the name as its UTF-8 bytes: in place when it has no escapes (nearly always).
    mutating func members(
        depth: Int, _ body: (UnsafeBufferPointer<UInt8>, JSONValue) throws(JSONParseError) -> Void
    ) throws(JSONParseError) {
        guard depth <= JSONValue.maxDepth else { throw error("nested too deep") }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { throw error("expected an object") }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let name = try memberName()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try value(depth: depth)
            switch name {
            case .inPlace(let range): try body(UnsafeBufferPointer(rebasing: bytes[range]), value)
            case .read(let text):
                // The standard library's closures rethrow untyped errors: carry the typed one out.
                var failure = TypedFailure<JSONParseError>()
                let done: Void? = Array(text.utf8).withUnsafeBufferPointer { name in failure.catching { () throws(JSONParseError) in try body(name, value) } }
                try failure.value(done)
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
            index += 1
            return
        }
    }

    private mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= JSONValue.maxDepth else { throw error("nested too deep") }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
            index += 1
            return .array(items)
        }
    }

    mutating func number() throws(JSONParseError) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[try numberRange()]), as: UTF8.self)
    }

    /// Where the number at `index` lies (RFC 8259's grammar), `index` moved past it.
    mutating func numberRange() throws(JSONParseError) -> Range<Int> {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected an exponent") }
            skipDigits()
        }
        return start..<index
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    /// A member's name: where it lies in the text, or read as a string when it has escapes.
    enum MemberName {
        case inPlace(Range<Int>)
        case read(String)
    }

    /// The member name at `index` (on its opening quote): its bytes where they lie when it has no
    /// escape (valid UTF-8, as `string()` checks), else `string()`'s reading of it.
    mutating func memberName() throws(JSONParseError) -> MemberName {
        let start = index + 1
        let (end, ascii) = plainRun(from: start)
        // An escape, a control character or no end: as any string (its errors at their offsets).
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { return .read(try string()) }
        if !ascii { _ = try validated(start..<end, ascii: false) }
        index = end + 1
        return .inPlace(start..<end)
    }

    /// From `start` (just after an opening quote): where the string's run without escapes or
    /// control characters ends (its closing quote, a backslash, a control character, or the end
    /// of the text), and whether the run is ASCII.
    private func plainRun(from start: Int) -> (end: Int, ascii: Bool) {
        PlainRun.end(in: bytes, from: start)
    }

    /// A string at `index` (on its opening quote). Without escapes it is one copy of the bytes.
    mutating func string() throws(JSONParseError) -> String {
        let start = index + 1
        let (end, ascii) = plainRun(from: start)
        index = end
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            let text = try validated(start..<end, ascii: ascii)
            index += 1
            return text
        }
        guard index < bytes.count else { throw error("unterminated string") }
        if bytes[index] < 0x20 { throw error("control character in a string") }
        // Escapes: collect the bytes, then validate once.
        var collected = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: collected, as: UTF8.self) else { throw error("invalid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): collected.append(escape)
                case UInt8(ascii: "b"): collected.append(0x08)
                case UInt8(ascii: "f"): collected.append(0x0C)
                case UInt8(ascii: "n"): collected.append(0x0A)
                case UInt8(ascii: "r"): collected.append(0x0D)
                case UInt8(ascii: "t"): collected.append(0x09)
                case UInt8(ascii: "u"): try unicodeEscape(into: &collected)
                default: throw error("unknown escape")
                }
            case 0..<0x20:
                throw error("control character in a string")
            default:
                collected.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    /// ASCII (nearly every string here) is valid as it is: only other text is validated, with the
    /// standard library's generic validation, which costs a metadata lookup each call.
    private func validated(_ range: Range<Int>, ascii: Bool) throws(JSONParseError) -> String {
        if ascii { return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) else {
            throw JSONParseError(offset: range.lowerBound, reason: "invalid UTF-8")
        }
        return text
    }

    /// `\uXXXX` (after the `u`), with a surrogate pair read as one scalar.
    private mutating func unicodeEscape(into collected: inout [UInt8]) throws(JSONParseError) {
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw error("lone surrogate")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("lone surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error("lone surrogate")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid escape") }
        UTF8.encode(unicode) { collected.append($0) }
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("bad hex digit")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}

extension JSONValue {
    public init(parsing raw: UnsafeRawBufferPointer) throws(JSONParseError) {
        var failure = TypedFailure<JSONParseError>()
        let value = raw.withMemoryRebound(to: UInt8.self) { bytes in failure.catching { () throws(JSONParseError) in try JSONValue(parsing: bytes) } }
        try self = failure.value(value)
    }
}

import Foundation

/// base64url (RFC 4648 §5) without padding, as JWS segments use it.
public enum Base64URL {
    /// Decodes one unpadded base64url segment; `nil` for any character outside the alphabet
    /// (padding included), an impossible length, or a last character whose unused bits are not zero.
    public static func decode(_ text: Substring) -> [UInt8]? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode($0) }) { return decoded }
        return decode(Array(text.utf8))
    }

    /// The same over the segment's bytes (a token's, read in place: walking a substring's UTF-8
    /// view checks every index, a tenth of a signed transaction's verification).
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text {
            let value = values[Int(byte)]
            guard value >= 0 else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // 2 or 4 leftover bits are the tail of the last byte; 6 mean a length of 4n+1. The tail
        // must be zero (RFC 4648 §3.5, canonical): otherwise one signed payload has several
        // spellings, each a new digest and a new ticket.
        guard bits < 6, accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Whether `text` has the shape of a compact JWS: three non-empty base64url segments.
    public static func isCompactJWS(_ text: String) -> Bool {
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { return false }
        return segments.allSatisfy { segment in
            !segment.isEmpty && segment.utf8.allSatisfy { values[Int($0)] >= 0 } && segment.utf8.count % 4 != 1
        }
    }

    private static let values: [Int8] = (0..<256).map { code in
        switch UInt8(code) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int8(code - 65)
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return Int8(code - 97 + 26)
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int8(code - 48 + 52)
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return -1
        }
    }
}

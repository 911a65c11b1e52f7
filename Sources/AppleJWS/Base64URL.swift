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
        if let decoded = text.withContiguousStorageIfAvailable({ decode(bytes: $0) }) { return decoded }
        return Array(text).withUnsafeBufferPointer { decode(bytes: $0) }
    }

    /// Four characters at a time into three bytes written in place, then the tail: 2 or 3
    /// characters. A length of 4n+1, a character outside the alphabet (padding included), or a
    /// tail whose unused bits are not zero is refused (RFC 4648 §3.5, canonical): otherwise one
    /// signed payload has several spellings, each a new digest and a new ticket.
    private static func decode(bytes text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let (blocks, tail) = text.count.quotientAndRemainder(dividingBy: 4)
        guard tail != 1 else { return nil }
        let capacity = blocks * 3 + max(tail - 1, 0)
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = 0
            var index = 0
            while index + 4 <= text.count {
                let a = values[Int(text[index])], b = values[Int(text[index + 1])]
                let c = values[Int(text[index + 2])], d = values[Int(text[index + 3])]
                guard a | b | c | d >= 0 else { valid = false; return }
                let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                buffer[count] = UInt8(truncatingIfNeeded: word >> 16)
                buffer[count + 1] = UInt8(truncatingIfNeeded: word >> 8)
                buffer[count + 2] = UInt8(truncatingIfNeeded: word)
                count += 3
                index += 4
            }
            guard tail > 0 else { return }
            var word: UInt32 = 0
            for offset in 0..<tail {
                let value = values[Int(text[index + offset])]
                guard value >= 0 else { valid = false; return }
                word = word << 6 | UInt32(value)
            }
            // 2 characters: 12 bits, one byte and 4 bits that must be zero; 3: 18 bits, two bytes and 2.
            let unused = UInt32(tail == 2 ? 4 : 2)
            guard word & ((1 << unused) - 1) == 0 else { valid = false; return }
            word >>= unused
            if tail == 3 {
                buffer[count] = UInt8(truncatingIfNeeded: word >> 8)
                count += 1
            }
            buffer[count] = UInt8(truncatingIfNeeded: word)
            count += 1
        }
        return valid ? output : nil
    }

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Whether `text` has the shape of a compact JWS: three non-empty base64url segments.
    /// One pass over the bytes (a signed payload is kilobytes: splitting it into substrings first
    /// was a tenth of the intake's cost of a retention request).
    public static func isCompactJWS(_ text: String) -> Bool {
        var dots = 0, length = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard length > 0, length % 4 != 1, dots < 2 else { return false }
                dots += 1
                length = 0
            } else {
                guard values[Int(byte)] >= 0 else { return false }
                length += 1
            }
        }
        return dots == 2 && length > 0 && length % 4 != 1
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

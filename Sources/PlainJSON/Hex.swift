/// Lowercase hexadecimal, both ways, without Foundation's formatter (which went through a
/// `String(format:)` per byte: 14 % of the intake's CPU when it hashed receipts that way).
public enum Hex {
    /// Inlinable so that each caller's sequence (a digest, an HMAC, an array) is iterated in its
    /// own specialisation: unspecialised, a 32-byte digest took 16 thousand instructions through
    /// witness tables (3 % of a receipt's cost in the intake, counted by `intake-cost`).
    @inlinable
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(Swift.max(bytes.underestimatedCount, 32) * 2)
        for byte in bytes {
            text.append(digit(byte >> 4))
            text.append(digit(byte & 0x0f))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The lowercase digit of a value below 16.
    @inlinable
    static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? value &+ UInt8(ascii: "0") : value &+ (UInt8(ascii: "a") &- 10)
    }

    /// The bytes of an even number of hex digits (either case); `nil` for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}

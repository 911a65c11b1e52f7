extension JSONValue {
    /// The canonical text: members sorted by name (byte order), no whitespace, `/` and non-ASCII
    /// left as they are. The same value always gives the same bytes, which matters because a
    /// job's exact bytes identify it in Redis lists.
    public var canonicalText: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public func write(into bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let text): Self.write(text, into: &bytes)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (offset, item) in items.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                item.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            members.forEachInCanonicalOrder { member in
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                Self.write(member.key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// A string, quoted and escaped. The bytes that need no escape (nearly all: a receipt's
    /// base64, ids, names) go in runs, each one copy, not byte by byte (a 4 KB receipt was
    /// 48 µs to write, the verify job's whole cost).
    static func write(_ text: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { utf8 in
            var start = 0
            var index = PlainRun.end(in: utf8, from: 0).end
            while index < utf8.count {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                writeEscaped(utf8[index], into: &bytes)
                start = index + 1
                index = PlainRun.end(in: utf8, from: start).end
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        if done == nil {
            for byte in text.utf8 {
                if needsEscape(byte) { writeEscaped(byte, into: &bytes) } else { bytes.append(byte) }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// One byte that needs an escape. Byte by byte: an array literal per escape was an
    /// allocation each (a job within a job escapes every quote: 68 thousand calls in 2,000 grant jobs).
    private static func writeEscaped(_ byte: UInt8, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(UInt8(ascii: "u"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(hexDigits[Int(byte >> 4)])
            bytes.append(hexDigits[Int(byte & 0x0F)])
        }
    }

    /// `String(value)`'s digits, without making a `String`.
    static func writeDecimal(_ value: Int64, into bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(24 - count)...])
        }
    }

    /// Byte order of the names' UTF-8 (canonical text), compared a buffer at a time where the
    /// strings are contiguous (native strings are).
    static func utf8Precedes(_ a: String, _ b: String) -> Bool {
        let fast: Bool?? = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in
                for index in 0..<min(left.count, right.count) where left[index] != right[index] {
                    return left[index] < right[index]
                }
                return left.count < right.count
            }
        }
        if let fast, let answer = fast { return answer }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}

/// Where a JSON string's plain bytes end: those it holds as they are, anything but `"`, `\` and a
/// control character. Read eight bytes at a time: a receipt's base64 and a job's ids are nearly all
/// plain, and the byte-by-byte loop was most of what reading and writing strings cost.
enum PlainRun {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// From `start`: the index of the first byte that is `"`, `\` or below 0x20 (`bytes.count` if
    /// none), and whether every byte before it is ASCII.
    static func end(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (end: Int, ascii: Bool) {
        var end = start
        var seen: UInt64 = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while end + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: end, as: UInt64.self)
                if mayEnd(word) { break }
                seen |= word
                end += 8
            }
        }
        var ascii = seen & highBits == 0
        // The last few bytes, or the word holding the end: byte by byte.
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            if byte >= 0x80 { ascii = false }
            end += 1
        }
        return (end, ascii)
    }

    /// Whether one of the eight bytes is below 0x20, `"` or `\` (exact: the tests for a byte
    /// below n, n ≤ 128, and for a zero byte never miss one).
    @inline(__always)
    private static func mayEnd(_ word: UInt64) -> Bool {
        below(word, 0x20) || hasZero(word ^ (ones &* 0x22)) || hasZero(word ^ (ones &* 0x5C))
    }

    @inline(__always)
    private static func hasZero(_ word: UInt64) -> Bool { (word &- ones) & ~word & highBits != 0 }

    @inline(__always)
    private static func below(_ word: UInt64, _ n: UInt64) -> Bool { (word &- ones &* n) & ~word & highBits != 0 }
}

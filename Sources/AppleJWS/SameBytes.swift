import Foundation

extension Array where Element == UInt8 {
    /// Whether these bytes are `other`'s: the lengths first, then one `memcmp` (a member name or a
    /// 3 kB JWS header compared on every verification; a loop byte by byte cost more).
    func isSame(as other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard count == other.count else { return false }
        guard let theirs = other.baseAddress else { return true }
        return withUnsafeBufferPointer { memcmp($0.baseAddress!, theirs, count) == 0 }
    }
}

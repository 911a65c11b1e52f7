#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Strings compared as their UTF-8 bytes, as canonical JSON writes them and Redis keys them (not by
/// `String`'s `==`, under which "é" composed and decomposed are one).
public enum UTF8Bytes {
    /// The same bytes, compared a buffer at a time where both strings are contiguous (native ones are).
    public static func equal(_ a: String, _ b: String) -> Bool {
        let fast: Bool?? = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in
                left.count == right.count && (left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
        if let fast, let same = fast { return same }
        return a.utf8.elementsEqual(b.utf8)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's permission bits, read with `stat` (Foundation's attributes would do, at a cost of
/// an NSNumber per call and less clarity about which bits).
package enum FilePermissions {
    /// The permission bits (`0o777` mask) of `path`; `nil` when it cannot be read.
    package static func mode(of path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt32(info.st_mode) & 0o777
    }
}

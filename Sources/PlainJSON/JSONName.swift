#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A member's name as `JSONCursor` read it: its UTF-8 bytes (escapes read), valid during the call
/// it is handed to only. A reader matches it against its literals in a `switch`
/// (`case "ticket":`): a length compared, then bytes, and no `String` made for the name.
public struct JSONName {
    @usableFromInline let bytes: UnsafeBufferPointer<UInt8>

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The name as a string (for a caller that keeps it).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The same bytes as the literal: names are told apart by their bytes, as canonical text writes them.
    @inlinable
    public static func ~= (literal: StaticString, name: JSONName) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard count == name.bytes.count else { return false }
        return count == 0 || memcmp(literal.utf8Start, name.bytes.baseAddress!, count) == 0
    }
}

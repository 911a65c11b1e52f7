/// One command as binary-safe arguments: `RedisCommand("SET", "k", "v")` or `RedisCommand(bytes: …)`.
///
/// A string argument is kept as the `String` it was given and its UTF-8 is written straight into
/// the connection's buffer: a script call's keys and arguments were each copied into an array of
/// their own first (about 25 allocations and copies a grant job, callgrind).
public struct RedisCommand: Sendable, Equatable {
    /// One argument: bytes, or a string (sent as its UTF-8).
    public enum Argument: Sendable {
        case bytes([UInt8])
        case text(String)

        /// Its length on the wire.
        @inline(__always)
        var count: Int {
            switch self {
            case .bytes(let bytes): bytes.count
            case .text(let text): text.utf8.count
            }
        }

        /// Its bytes, as a copy (tests, and the rare caller that wants an array).
        public var bytes: [UInt8] {
            switch self {
            case .bytes(let bytes): bytes
            case .text(let text): Array(text.utf8)
            }
        }

        /// Its bytes where they lie.
        @inline(__always)
        func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            switch self {
            case .bytes(let bytes):
                return bytes.withUnsafeBufferPointer(body)
            case .text(let text):
                if let done = text.utf8.withContiguousStorageIfAvailable(body) { return done }
                return Array(text.utf8).withUnsafeBufferPointer(body)
            }
        }

        /// Whether it is `word`, letters compared without case (a command's name, `STREAMS`).
        func isWord(_ word: StaticString) -> Bool {
            withBytes { bytes in
                word.withUTF8Buffer { expected in
                    bytes.count == expected.count
                        && zip(bytes, expected).allSatisfy { $0 == $1 || ($0 >= 0x61 && $0 <= 0x7A && $0 - 0x20 == $1) }
                }
            }
        }
    }

    public var parts: [Argument]
    /// On Redis Cluster, the key whose slot must run this command when its own arguments do not
    /// say (`SCRIPT LOAD` for the node a script's keys live on).
    public var routingKey: [UInt8]?

    public init(bytes arguments: [[UInt8]]) {
        parts = arguments.map(Argument.bytes)
    }

    public init(_ arguments: [String]) {
        parts = arguments.map(Argument.text)
    }

    public init(_ arguments: String...) {
        self.init(arguments)
    }

    public init(parts: [Argument]) {
        self.parts = parts
    }

    /// The arguments' bytes (copies of the strings').
    public var arguments: [[UInt8]] { parts.map(\.bytes) }

    /// The command name, for logs: arguments are never logged, they may hold receipts.
    public var name: String {
        parts.first.map { $0.withBytes { String(decoding: $0, as: UTF8.self) }.uppercased() } ?? ""
    }

    /// The same bytes make the same command, whether they were given as strings or as bytes.
    public static func == (a: RedisCommand, b: RedisCommand) -> Bool {
        a.routingKey == b.routingKey && a.arguments == b.arguments
    }
}

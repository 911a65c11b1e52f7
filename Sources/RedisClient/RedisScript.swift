import NIOConcurrencyHelpers

/// A named Lua script. Its SHA is learnt from SCRIPT LOAD and shared by every connection.
public final class RedisScript: Sendable {
    public let name: String
    public let source: String
    private let sha = NIOLockedValueBox<String?>(nil)

    public init(name: String, source: String) {
        self.name = name
        self.source = source
    }

    var loadedSHA: String? {
        get { sha.withLockedValue { $0 } }
        set { sha.withLockedValue { $0 = newValue } }
    }
}

/// One command as binary-safe arguments: `RedisCommand("SET", "k", "v")` or `RedisCommand(bytes: …)`.
public struct RedisCommand: Sendable, Equatable {
    public var arguments: [[UInt8]]
    /// On Redis Cluster, the key whose slot must run this command when its own arguments do not
    /// say (`SCRIPT LOAD` for the node a script's keys live on).
    public var routingKey: [UInt8]?

    public init(bytes arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    public init(_ arguments: [String]) {
        self.arguments = arguments.map { Array($0.utf8) }
    }

    public init(_ arguments: String...) {
        self.init(arguments)
    }

    /// The command name, for logs: arguments are never logged, they may hold receipts.
    public var name: String {
        arguments.first.map { String(decoding: $0, as: UTF8.self).uppercased() } ?? ""
    }
}

import NIOCore
import NIOPosix
import Synchronization

/// A few multiplexed connections for ordinary commands, taken in turn (each carries many
/// commands at once), plus dedicated connections for blocking commands.
public final class RedisClient: RedisCommandSending, Sendable {
    public let configuration: RedisConfiguration
    private let connections: [RedisConnection]
    private let eventLoopGroup: any EventLoopGroup
    private let turn = Atomic<Int>(0)

    /// - Parameter poolSize: connections shared by all callers; one per event loop is plenty.
    public init(
        configuration: RedisConfiguration, poolSize: Int = 2,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        precondition(poolSize > 0, "poolSize must be positive")
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.connections = (0..<poolSize).map { _ in RedisConnection(configuration: configuration, eventLoopGroup: eventLoopGroup) }
    }

    public convenience init(url: String, poolSize: Int = 2) throws {
        self.init(configuration: try RedisConfiguration(url: url), poolSize: poolSize)
    }

    public func execute(_ command: RedisCommand) async throws -> RedisReply {
        try await nextConnection().execute(command)
    }

    public func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        try await nextConnection().pipeline(commands)
    }

    /// A connection of its own for a blocking command; the caller closes it.
    public func makeDedicatedConnection() -> RedisConnection {
        RedisConnection(configuration: configuration, eventLoopGroup: eventLoopGroup)
    }

    public func close() async {
        for connection in connections { await connection.close() }
    }

    /// The next connection in turn that is up; the next in turn when none is (it dials).
    /// After an outage, the first connection back serves everyone while the others wait out
    /// their backoff.
    private func nextConnection() -> RedisConnection {
        if connections.count == 1 { return connections[0] }
        let start = turn.add(1, ordering: .relaxed).oldValue
        for offset in 0..<connections.count {
            let connection = connections[(start &+ offset) % connections.count]
            if connection.isConnected { return connection }
        }
        return connections[start % connections.count]
    }
}

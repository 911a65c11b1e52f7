import NIOCore
import NIOPosix
import Synchronization

/// A few multiplexed connections for ordinary commands, taken in turn (each carries many
/// commands at once), plus dedicated connections for blocking commands. On Redis Cluster
/// (`redis-cluster://`) that many connections per primary, each command routed by its key's slot.
public final class RedisClient: RedisCommandSending, Sendable {
    public let configuration: RedisConfiguration
    private let connections: [RedisConnection]
    private let cluster: RedisClusterRouter?
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
        if case .cluster(let seeds) = configuration.endpoint {
            self.cluster = RedisClusterRouter(configuration: configuration, seeds: seeds, poolSize: poolSize, group: eventLoopGroup)
            self.connections = []
        } else {
            self.cluster = nil
            self.connections = (0..<poolSize).map { _ in RedisConnection(configuration: configuration, eventLoopGroup: eventLoopGroup) }
        }
    }

    public convenience init(url: String, poolSize: Int = 2) throws {
        self.init(configuration: try RedisConfiguration(url: url), poolSize: poolSize)
    }

    public func execute(_ command: RedisCommand) async throws -> RedisReply {
        if let cluster { return try await cluster.execute(command) }
        return try await nextConnection().execute(command)
    }

    /// On a cluster, every command of the pipeline that has keys must hash to one slot.
    public func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if let cluster { return try await cluster.pipeline(commands) }
        return try await nextConnection().pipeline(commands)
    }

    /// A connection of its own for a blocking command; the caller closes it. On a cluster it
    /// talks to the first seed: use `makeDedicatedConnection(forKey:)`.
    public func makeDedicatedConnection() -> RedisConnection {
        RedisConnection(configuration: configuration, eventLoopGroup: eventLoopGroup)
    }

    /// A connection of its own to the server that holds `key`: on a cluster, the primary of its
    /// slot, found at every dial (after a move or a failover it dials the new owner).
    public func makeDedicatedConnection(forKey key: String) -> RedisConnection {
        guard cluster != nil else { return makeDedicatedConnection() }
        var routed = configuration
        routed.clusterSlot = RedisClusterSlot.of(key)
        return RedisConnection(configuration: routed, eventLoopGroup: eventLoopGroup)
    }

    public func close() async {
        await cluster?.close()
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

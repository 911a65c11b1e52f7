import NIOConcurrencyHelpers

/// A small pool of connections for ordinary commands, plus dedicated connections for blocking pops.
public final class RedisClient: RedisCommandSending, Sendable {
    public let configuration: RedisConfiguration
    private let connections: [RedisConnection]
    private let state: NIOLockedValueBox<PoolState>

    private struct PoolState {
        var idle: [Int]
        var waiters: [CheckedContinuation<Int, Never>] = []
    }

    public init(configuration: RedisConfiguration, poolSize: Int = 4) {
        precondition(poolSize > 0, "poolSize must be positive")
        self.configuration = configuration
        self.connections = (0..<poolSize).map { _ in RedisConnection(configuration: configuration) }
        self.state = NIOLockedValueBox(PoolState(idle: Array(0..<poolSize)))
    }

    public convenience init(url: String, poolSize: Int = 4) throws {
        self.init(configuration: try RedisConfiguration(url: url), poolSize: poolSize)
    }

    public func execute(_ command: RedisCommand) async throws -> RedisReply {
        try await withConnection { try await $0.execute(command) }
    }

    public func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        try await withConnection { try await $0.pipeline(commands) }
    }

    /// A connection of its own for a blocking command; the caller closes it.
    public func makeDedicatedConnection() -> RedisConnection {
        RedisConnection(configuration: configuration)
    }

    public func close() async {
        for connection in connections { await connection.close() }
    }

    private func withConnection<T: Sendable>(_ body: (RedisConnection) async throws -> T) async throws -> T {
        let index = await checkOut()
        defer { checkIn(index) }
        return try await body(connections[index])
    }

    private func checkOut() async -> Int {
        if let index = state.withLockedValue({ $0.idle.popLast() }) { return index }
        return await withCheckedContinuation { continuation in
            let ready: Int? = state.withLockedValue { state in
                if let index = state.idle.popLast() { return index }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func checkIn(_ index: Int) {
        let waiter: CheckedContinuation<Int, Never>? = state.withLockedValue { state in
            if state.waiters.isEmpty {
                state.idle.append(index)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume(returning: index)
    }
}

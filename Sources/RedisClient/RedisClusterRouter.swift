import NIOConcurrencyHelpers
import NIOCore

/// Routes commands over a Redis Cluster: the slot map from `CLUSTER SLOTS`, a few multiplexed
/// connections per primary, each command (or pipeline: one per slot its keys lie in) sent to
/// the primary of its key's slot. It follows the cluster as it changes:
/// - `MOVED`: the slot has a new owner for good; the map is read again and the command resent there;
/// - `ASK`: the slot is being moved and this key already left; resent once to the named node,
///   after `ASKING`, without touching the map;
/// - `TRYAGAIN` (a multi-key command while its keys are split by a move) and `CLUSTERDOWN`
///   (a primary failed and its replica is not yet promoted): resent after a backoff;
/// - a node that cannot be reached: the map is read again (a failover names the new primary).
/// A command whose connection broke mid-flight is not resent (whether it ran is unknown): the
/// caller gets `connectionLost`, as with one server.
final class RedisClusterRouter: Sendable {
    private let configuration: RedisConfiguration
    private let seeds: [RedisConfiguration.Address]
    private let poolSize: Int
    private let group: any EventLoopGroup
    private let state = NIOLockedValueBox(State())

    /// Redirections and retries one call may follow before it gives up with the last error.
    static let maxAttempts = 16

    private struct State {
        /// The primary of each slot; empty until the map is first read.
        var owners: [RedisConfiguration.Address] = []
        var pools: [RedisConfiguration.Address: [RedisConnection]] = [:]
        var turn = 0
        var refreshing: Task<Void, any Error>?
        var isClosed = false
    }

    init(configuration: RedisConfiguration, seeds: [RedisConfiguration.Address], poolSize: Int, group: any EventLoopGroup) {
        self.configuration = configuration
        self.seeds = seeds
        self.poolSize = poolSize
        self.group = group
    }

    func execute(_ command: RedisCommand) async throws -> RedisReply {
        try await run([command])[0]
    }

    /// A pipeline whose keys lie in several slots (a reader adding up every bucket) is sent as
    /// one pipeline per slot, all at once; the replies come back in the order of the commands.
    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if commands.isEmpty { return [] }
        var bySlot: [Int: [Int]] = [:]
        var order: [Int] = []
        for (index, command) in commands.enumerated() {
            // Commands without a key go together, to any node.
            let slot = command.clusterSlot ?? -1
            if bySlot[slot] == nil { order.append(slot) }
            bySlot[slot, default: []].append(index)
        }
        if order.count == 1 { return try await run(commands) }
        return try await withThrowingTaskGroup(of: ([Int], [RedisReply]).self) { group in
            for slot in order {
                let indices = bySlot[slot] ?? []
                let part = indices.map { commands[$0] }
                group.addTask { (indices, try await self.run(part)) }
            }
            var replies = [RedisReply](repeating: .null, count: commands.count)
            for try await (indices, answers) in group {
                for (index, answer) in zip(indices, answers) { replies[index] = answer }
            }
            return replies
        }
    }

    func close() async {
        let pools = state.withLockedValue { state in
            state.isClosed = true
            state.refreshing?.cancel()
            return state.pools.values.flatMap { $0 }
        }
        for connection in pools { await connection.close() }
    }

    // MARK: routing

    private func run(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        let slot = commands.lazy.compactMap(\.clusterSlot).first
        var askingNode: RedisConfiguration.Address?
        var backoff: Duration = .milliseconds(10)
        var lastError: (any Error)?
        for _ in 0..<Self.maxAttempts {
            let node: RedisConfiguration.Address
            do {
                if let askingNode { node = askingNode } else { node = try await owner(of: slot) }
            } catch {
                lastError = error
                try await pause(&backoff)
                continue
            }
            let sent = askingNode == nil ? commands : commands.flatMap { $0.clusterSlot == nil ? [$0] : [RedisCommand("ASKING"), $0] }
            let replies: [RedisReply]
            do {
                let connection = self.connection(to: node)
                replies = sent.count == 1 ? [try await connection.execute(sent[0])] : try await connection.pipeline(sent)
            } catch RedisError.connectionFailed(let why) {
                // Nothing was sent: the node is down or gone. Read the map again and retry.
                lastError = RedisError.connectionFailed(why)
                askingNode = nil
                refreshSoon()
                try await pause(&backoff)
                continue
            }
            let answers = askingNode == nil ? replies : Self.droppingAsking(replies, sent: sent)
            askingNode = nil
            guard let redirect = answers.lazy.compactMap(Redirect.init).first else { return answers }
            lastError = RedisError.server(redirect.message)
            RedisMetrics.redirected(redirect.message.prefix { $0 != " " })
            switch redirect {
            case .moved(let movedSlot, let address):
                state.withLockedValue { state in
                    if state.owners.count == RedisClusterSlot.count { state.owners[movedSlot] = address }
                }
                refreshSoon()
            case .ask(let address):
                askingNode = address
            case .retryLater:
                try await pause(&backoff)
            }
        }
        throw lastError ?? RedisError.connectionFailed("the cluster did not answer")
    }

    /// The replies to the commands of `sent` that are not `ASKING`.
    private static func droppingAsking(_ replies: [RedisReply], sent: [RedisCommand]) -> [RedisReply] {
        zip(sent, replies).filter { $0.0.name != "ASKING" }.map(\.1)
    }

    private func pause(_ backoff: inout Duration) async throws {
        try await Task.sleep(for: backoff)
        backoff = min(backoff * 2, .milliseconds(500))
    }

    /// What an error reply asks of the client, if anything.
    enum Redirect: Equatable {
        case moved(slot: Int, RedisConfiguration.Address)
        case ask(RedisConfiguration.Address)
        case retryLater(String)

        init?(_ reply: RedisReply) {
            guard case .error(let message) = reply else { return nil }
            let parts = message.split(separator: " ")
            if parts.count == 3, parts[0] == "MOVED" || parts[0] == "ASK", let slot = Int(parts[1]),
               let colon = parts[2].lastIndex(of: ":"), let port = Int(parts[2][parts[2].index(after: colon)...])
            {
                let address = RedisConfiguration.Address(host: String(parts[2][..<colon]), port: port)
                self = parts[0] == "MOVED" ? .moved(slot: slot, address) : .ask(address)
            } else if message.hasPrefix("TRYAGAIN") || message.hasPrefix("CLUSTERDOWN") {
                self = .retryLater(message)
            } else {
                return nil
            }
        }

        var message: String {
            switch self {
            case .moved(let slot, let address): "MOVED \(slot) \(address)"
            case .ask(let address): "ASK \(address)"
            case .retryLater(let message): message
            }
        }
    }

    // MARK: the slot map

    /// The primary of `slot` (any primary for a command without keys), reading the map first if needed.
    private func owner(of slot: Int?) async throws -> RedisConfiguration.Address {
        if let known = state.withLockedValue({ state in
            state.owners.isEmpty ? nil : state.owners[slot ?? (state.turn % RedisClusterSlot.count)]
        }) {
            return known
        }
        try await refresh()
        guard let owner = state.withLockedValue({ $0.owners.isEmpty ? nil : $0.owners[slot ?? 0] }) else {
            throw RedisError.connectionFailed("the cluster's slot map is empty")
        }
        return owner
    }

    /// Starts reading the map again unless a read is under way.
    private func refreshSoon() {
        state.withLockedValue { state in
            guard !state.isClosed, state.refreshing == nil else { return }
            state.refreshing = Task { try await self.readMap() }
        }
    }

    /// Reads the map, or waits for the read under way.
    private func refresh() async throws {
        let task = state.withLockedValue { state -> Task<Void, any Error> in
            if let running = state.refreshing { return running }
            let task = Task { try await self.readMap() }
            state.refreshing = task
            return task
        }
        try await task.value
    }

    /// The map from the known primaries, else the seeds.
    private func readMap() async throws {
        defer { state.withLockedValue { $0.refreshing = nil } }
        let known = state.withLockedValue { Array(Set($0.owners)) }
        let owners = try await Self.readOwners(asking: known + seeds.filter { !known.contains($0) }, configuration: configuration)
        state.withLockedValue { $0.owners = owners }
    }

    /// Each slot's primary, from `CLUSTER SLOTS` of the first of `nodes` that answers with a whole map.
    static func readOwners(
        asking nodes: [RedisConfiguration.Address], configuration: RedisConfiguration
    ) async throws -> [RedisConfiguration.Address] {
        var failures: [String] = []
        for node in nodes {
            let connection = RedisConnection(configuration: nodeConfiguration(node, of: configuration))
            defer { Task { await connection.close() } }
            do {
                return try owners(from: try await connection.execute(RedisCommand("CLUSTER", "SLOTS")), askedAt: node)
            } catch {
                failures.append("\(node): \(error)")
            }
        }
        throw RedisError.connectionFailed("no cluster node answered CLUSTER SLOTS: \(failures.joined(separator: "; "))")
    }

    /// Each slot's primary from a `CLUSTER SLOTS` reply; every slot must be served.
    static func owners(from reply: RedisReply, askedAt node: RedisConfiguration.Address) throws -> [RedisConfiguration.Address] {
        guard let ranges = reply.array else { throw RedisError.unexpectedReply("CLUSTER SLOTS: \(reply)") }
        var owners = [RedisConfiguration.Address?](repeating: nil, count: RedisClusterSlot.count)
        for range in ranges {
            guard let fields = range.array, fields.count >= 3, let first = fields[0].int.map(Int.init),
                  let last = fields[1].int.map(Int.init), let primary = fields[2].array, primary.count >= 2,
                  let port = primary[1].int.map(Int.init),
                  0 <= first, first <= last, last < RedisClusterSlot.count
            else { throw RedisError.unexpectedReply("CLUSTER SLOTS range: \(range)") }
            // An empty or unknown host means "the node you asked".
            let host = primary[0].string.flatMap { $0.isEmpty || $0 == "?" ? nil : $0 } ?? node.host
            let address = RedisConfiguration.Address(host: host, port: port)
            for slot in first...last { owners[slot] = address }
        }
        let served = owners.compactMap { $0 }
        guard served.count == RedisClusterSlot.count else {
            throw RedisError.server("CLUSTERDOWN \(RedisClusterSlot.count - served.count) slots have no primary")
        }
        return served
    }

    // MARK: connections

    private func connection(to node: RedisConfiguration.Address) -> RedisConnection {
        state.withLockedValue { state in
            if state.pools[node] == nil {
                state.pools[node] = (0..<poolSize).map { _ in
                    RedisConnection(configuration: nodeConfiguration(node), eventLoopGroup: group)
                }
            }
            // The next connection in turn that is up, else the next in turn (it dials), as `RedisClient` does.
            state.turn &+= 1
            let pool = state.pools[node]!
            let start = state.turn
            return (0..<pool.count).lazy.map { pool[(start &+ $0) % pool.count] }.first(where: \.isConnected)
                ?? pool[start % pool.count]
        }
    }

    private func nodeConfiguration(_ node: RedisConfiguration.Address) -> RedisConfiguration {
        Self.nodeConfiguration(node, of: configuration)
    }

    /// How to reach one node: the cluster's credentials and timeouts, that node's address.
    static func nodeConfiguration(_ node: RedisConfiguration.Address, of cluster: RedisConfiguration) -> RedisConfiguration {
        var configuration = RedisConfiguration(
            endpoint: .tcp(host: node.host, port: node.port), username: cluster.username, password: cluster.password,
            connectTimeout: cluster.connectTimeout, commandTimeout: cluster.commandTimeout)
        configuration.reconnectBackoff = cluster.reconnectBackoff
        configuration.tls = cluster.tls
        return configuration
    }

    /// The primary of `slot` now, as the first seed that answers `CLUSTER SLOTS` says (for a
    /// connection of its own, such as a sharded subscription's).
    static func primary(
        ofSlot slot: Int, configuration: RedisConfiguration, seeds: [RedisConfiguration.Address]
    ) async throws -> RedisConfiguration.Address {
        try await readOwners(asking: seeds, configuration: configuration)[slot]
    }
}

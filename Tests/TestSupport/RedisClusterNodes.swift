import Foundation
import LocalServers
import LoopbackPort
import RedisClient

#if canImport(Glibc)
import Glibc
#endif

/// A real Redis Cluster on loopback: `primaries` primaries with `replicasEach` replicas each
/// (`redis-server --cluster-enabled yes`, joined by `redis-cli --cluster create`), started for one
/// test and stopped after it.
public final class RedisClusterNodes: Sendable {
    public let ports: [Int]
    public let directory: URL
    private let children = ChildProcesses()

    /// `redis-cluster://` with every node as a seed.
    public var url: String { "redis-cluster://" + ports.map { "127.0.0.1:\($0)" }.joined(separator: ",") }

    private init(ports: [Int], directory: URL) {
        self.ports = ports
        self.directory = directory
    }

    /// `nodeTimeout`: how long a silent node has before it is failed over. Long by default, so that a
    /// machine loaded by the rest of the suite never fails a node over by itself; short to test a failover.
    public static func start(
        primaries: Int = 3, replicasEach: Int = 1, nodeTimeout: Duration = .seconds(15)
    ) async throws -> RedisClusterNodes {
        // As `RedisServer.start`: a port taken between its probe and the server's bind (or its bus
        // port, 10000 above) fails the start; new ports then, a few times.
        var lastError: (any Error)?
        for _ in 0..<3 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("iap-cluster-\(UUID().uuidString)")
            let ports = try (0..<(primaries * (1 + replicasEach))).map { _ in try LoopbackPort.freeWithCompanion() }
            let nodes = RedisClusterNodes(ports: ports, directory: directory)
            do {
                try await RedisClusterLaunch(ports: ports, directory: directory, replicasEach: replicasEach, nodeTimeout: nodeTimeout)
                    .start { port, process in nodes.children.keep(process, as: port) }
                return nodes
            } catch {
                nodes.stop()
                lastError = error
            }
        }
        throw lastError ?? TestSupportError("the cluster did not start")
    }

    /// The primary that serves `slot`, as that node's own `CLUSTER SLOTS` says.
    public func primaryPort(ofSlot slot: Int) async throws -> Int {
        let running = children.keys
        let live = ports.first { running.contains($0) } ?? ports[0]
        let connection = RedisConnection(configuration: .init(endpoint: .tcp(host: "127.0.0.1", port: live)))
        defer { Task { await connection.close() } }
        let reply = try await connection.execute(RedisCommand("CLUSTER", "SLOTS"))
        for range in reply.array ?? [] {
            guard let fields = range.array, let first = fields[0].int.map(Int.init), let last = fields[1].int.map(Int.init),
                  let port = fields[2].array?[1].int.map(Int.init) else { continue }
            if (first...last).contains(slot) { return port }
        }
        throw TestSupportError("no primary serves slot \(slot)")
    }

    /// A node's id (`CLUSTER MYID`).
    public func nodeID(port: Int) async throws -> String {
        try await directReply(port: port, "CLUSTER", "MYID")
    }

    /// The ports of the primaries.
    public func primaryPorts() async throws -> [Int] {
        var primaries: [Int] = []
        let running = children.keys
        for port in ports where running.contains(port) {
            if try await directReply(port: port, "ROLE").hasPrefix("master") { primaries.append(port) }
        }
        return primaries
    }

    /// Starts moving `slot` (as `redis-cli --cluster reshard` does): `target` importing it,
    /// `source` migrating it; its keys stay on `source` until `migrate` moves them.
    public func beginMove(_ slot: Int, from source: Int, to target: Int) async throws {
        _ = try await directReply(port: target, "CLUSTER", "SETSLOT", String(slot), "IMPORTING", try await nodeID(port: source))
        _ = try await directReply(port: source, "CLUSTER", "SETSLOT", String(slot), "MIGRATING", try await nodeID(port: target))
    }

    /// Moves `keys` from `source` to `target` (`MIGRATE … KEYS`).
    public func migrate(_ keys: [String], from source: Int, to target: Int) async throws {
        let reply = try await directReply(port: source, ["MIGRATE", "127.0.0.1", String(target), "", "0", "5000", "KEYS"] + keys)
        guard reply == "OK" else { throw TestSupportError("MIGRATE to :\(target) answered \(reply)") }
    }

    /// Ends a move: every primary names `target` the owner of `slot`.
    public func endMove(_ slot: Int, to target: Int) async throws {
        let id = try await nodeID(port: target)
        for port in try await primaryPorts() {
            _ = try await directReply(port: port, "CLUSTER", "SETSLOT", String(slot), "NODE", id)
        }
    }

    /// Stops one node with SIGKILL, as a crash would.
    public func kill(port: Int) {
        children.kill(port)
    }

    public func stop() {
        children.killAll()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        children.terminateRunning()
    }
}

/// Runs `body` with a fresh cluster and a client of it, and tears both down.
public func withRedisCluster<T>(
    primaries: Int = 3, replicasEach: Int = 1, nodeTimeout: Duration = .seconds(15),
    _ body: (RedisClient, RedisClusterNodes) async throws -> T
) async throws -> T {
    let nodes = try await RedisClusterNodes.start(primaries: primaries, replicasEach: replicasEach, nodeTimeout: nodeTimeout)
    let client = try RedisClient(url: nodes.url)
    do {
        let result = try await body(client, nodes)
        await client.close()
        nodes.stop()
        return result
    } catch {
        await client.close()
        nodes.stop()
        throw error
    }
}

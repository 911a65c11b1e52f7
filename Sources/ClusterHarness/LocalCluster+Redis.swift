import Foundation
import LocalServers
import RedisClient

#if canImport(Glibc)
import Glibc
#endif

/// The cluster's Redis: one node, or a primary, its replicas and the sentinels that watch it; and
/// the failover the drill forces on them.
extension LocalCluster {
    /// The port of the node that is the primary now.
    package var primaryPort: Int { redisPorts[primary] }

    /// What one forced failover took.
    package struct Failover: Sendable, Codable {
        /// When the killed primary had exited (Unix time, ms: the clock of the stream ids Redis
        /// writes, so an entry with a later id was written by the new primary).
        package var killedAtMs: Int64
        /// From the kill until every sentinel (on a cluster, every running node) named a new
        /// primary that says it is one.
        package var promotedSeconds: Double
        /// From the kill until the killed node was back as a replica and every replica was in sync.
        package var wholeSeconds: Double
    }

    /// Starts the primary, then the replicas and the sentinels, and waits until the sentinels
    /// could fail the primary over (they know each other and every replica).
    func startRedis() async throws {
        guard settings.topology != .cluster else { return try await startRedisCluster() }
        try await startRedisNode(0, replicaOf: nil)
        for node in redisPorts.indices.dropFirst() { try await startRedisNode(node, replicaOf: redisPorts[0]) }
        guard settings.topology == .sentinel else { return }
        try await waitUntil("every replica of :\(redisPorts[0]) is in sync", while: redisNodes[0]) {
            await self.onlineReplicas(of: self.redisPorts[0]) == RedisTopology.replicas
        }
        for index in sentinelPorts.indices { try await startSentinel(index) }
        try await waitUntil("the sentinels know each other and every replica", while: nil) {
            for port in self.sentinelPorts {
                let quorum = (try? await self.runTool("redis-cli", ["-p", String(port), "SENTINEL", "CKQUORUM", RedisTopology.master])) ?? ""
                guard quorum.contains("OK \(RedisTopology.sentinels) usable") else { return false }
                let replicas = (try? await self.runTool("redis-cli", ["-p", String(port), "SENTINEL", "REPLICAS", RedisTopology.master])) ?? ""
                guard replicas.components(separatedBy: "\nflags\nslave\n").count - 1 == RedisTopology.replicas else { return false }
            }
            return true
        }
    }

    /// Restarts every node that is down: in the `sentinel` topology, as a replica of the primary
    /// (unless it is the primary, which only `killRedis` leaves down).
    func healRedis() async throws {
        guard settings.topology != .cluster else { return try await healRedisCluster() }
        if redisNodes[primary]?.isRunning != true { try await startRedisNode(primary, replicaOf: nil) }
        for node in redisPorts.indices where node != primary && redisNodes[node]?.isRunning != true {
            try await startRedisNode(node, replicaOf: redisPorts[primary])
        }
    }

    /// `kill -9` the primary and wait until a replica is promoted (the sentinels name it; on a
    /// cluster, every node names it the owner of the pipeline's slot); then start the killed node
    /// again as a replica of the new primary (never as a primary: a stale primary back before the
    /// failover ends could take writes the failover then drops; a cluster node rejoins as what
    /// its `nodes.conf` and the cluster say), and wait until every replica is in sync, so the next
    /// failover has a replica to promote. (The sentinels may fail over more than once meanwhile:
    /// the primary is whichever they name last.) With a `replicationGap`, the primary's links to
    /// its replicas are cut that long before the kill.
    package func failover() async throws -> Failover {
        guard settings.topology != .single else { throw ClusterError("a failover needs the sentinel or the cluster topology") }
        let old = primary
        if settings.replicationGap > .zero {
            try await cutReplication()
            try await Task.sleep(for: settings.replicationGap)
        }
        let start = ContinuousClock.now
        if let node = redisNodes[old] { await node.stop(with: SIGKILL) }
        let killedAt = Date()
        let onCluster = settings.topology == .cluster
        primary = try await waitFor("a replica of :\(redisPorts[old]) is promoted", while: nil, within: .seconds(60)) {
            await (onCluster ? self.agreedSlotOwner() : self.primaryNamedBySentinels()).flatMap { $0 == old ? nil : $0 }
        }
        let promoted = ContinuousClock.now - start
        if onCluster {
            try await startRedisNode(old, replicaOf: nil)
            try await waitUntilClusterIsWhole()
        } else {
            try await startRedisNode(old, replicaOf: redisPorts[primary])
            primary = try await waitFor("the sentinels agree on a primary with every replica in sync", while: nil, within: .seconds(60)) {
                guard let node = await self.primaryNamedBySentinels() else { return nil }
                return await self.onlineReplicas(of: self.redisPorts[node]) == RedisTopology.replicas ? node : nil
            }
        }
        return Failover(
            killedAtMs: Int64(killedAt.timeIntervalSince1970 * 1000), promotedSeconds: promoted.seconds,
            wholeSeconds: (ContinuousClock.now - start).seconds)
    }

    /// The node every sentinel names as the primary, when they agree and it says it is a primary.
    func primaryNamedBySentinels() async -> Int? {
        var named: Set<Int> = []
        for port in sentinelPorts {
            let reply = (try? await runTool("redis-cli", ["-p", String(port), "SENTINEL", "get-master-addr-by-name", RedisTopology.master])) ?? ""
            guard let last = reply.split(separator: "\n").last, let node = Int(last).flatMap(redisPorts.firstIndex(of:)) else { return nil }
            named.insert(node)
        }
        guard named.count == 1, let node = named.first else { return nil }
        let role = (try? await runTool("redis-cli", ["-p", String(redisPorts[node]), "ROLE"])) ?? ""
        return role.hasPrefix("master") ? node : nil
    }

    private func nodeDirectory(_ node: Int) -> URL { dataDirectory.appendingPathComponent("redis-\(node)") }

    /// Starts one node on its folder: as a replica of `primaryPort` when given; a cluster node
    /// rejoins as what its `nodes.conf` and the cluster say it is.
    func startRedisNode(_ node: Int, replicaOf primaryPort: Int?) async throws {
        let port = redisPorts[node]
        try FileManager.default.createDirectory(at: nodeDirectory(node), withIntermediateDirectories: true)
        var launch = RedisServerLaunch(
            port: port, directory: nodeDirectory(node), options: ["--maxmemory-policy", "noeviction"] + settings.durability.redisArguments)
        if let primaryPort { launch.options += ["--replicaof", "127.0.0.1", String(primaryPort)] }
        if settings.topology == .cluster { launch.options += RedisClusterLaunch.nodeOptions(nodeTimeout: RedisTopology.clusterNodeTimeout) }
        let preload = settings.binDirectory.appendingPathComponent(RedisCrash.library).path
        let process = try self.launch(
            "redis-server", try Executable.find("redis-server"), launch.arguments,
            environment: settings.redisCrash == .powerCut ? ["LD_PRELOAD": preload] : [:])
        redisNodes[node] = process
        try await waitUntil("redis-server :\(port) answers PING", while: process) {
            (try? await self.runTool("redis-cli", ["-p", String(port), "PING"]))?.hasPrefix("PONG") == true
        }
    }

    /// Cuts the primary off its replicas until it dies, as a partition would: a password only the
    /// connections already open have (the replicas would dial again at once), then their links
    /// dropped. The password lives in memory only: the node restarts without it.
    func cutReplication() async throws {
        let replies = try await pipeline(
            [
                RedisCommand("CONFIG", "SET", "requirepass", "partitioned-\(UInt64.random(in: 0...UInt64.max))"),
                RedisCommand("CLIENT", "KILL", "TYPE", "replica"),
            ], onNodeAt: primaryPort)
        guard replies.count == 2, replies[1].int != nil else { throw ClusterError("cutting replication failed: \(replies)") }
    }

    /// Commands in one pipeline on a connection of their own to the node on `port`.
    func pipeline(_ commands: [RedisCommand], onNodeAt port: Int) async throws -> [RedisReply] {
        let connection = RedisConnection(configuration: .init(endpoint: .tcp(host: "127.0.0.1", port: port)))
        do {
            let replies = try await connection.pipeline(commands)
            await connection.close()
            return replies
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Waits until the primary has given its AOF buffer to the kernel (`aof_buffer_length:0`).
    /// With `appendfsync everysec`, while a background fsync is still running (a slow disk),
    /// Redis holds its writes back for up to 2 s and answers its clients meanwhile: a process
    /// crash then loses them. After this, a `kill -9` loses nothing Redis answered before it.
    package func waitUntilTheAOFIsWritten() async throws {
        let port = primaryPort
        try await waitUntil("redis-server :\(port) gave its AOF buffer to the kernel", while: redisNodes[primary]) {
            let info = try? await self.pipeline([RedisCommand("INFO", "persistence")], onNodeAt: port).first?.string
            return info?.contains("\r\naof_buffer_length:0\r\n") == true
        }
    }

    /// The replicas the node on `port` counts as online.
    private func onlineReplicas(of port: Int) async -> Int {
        let info = (try? await runTool("redis-cli", ["-p", String(port), "INFO", "replication"])) ?? ""
        return info.components(separatedBy: "state=online").count - 1
    }

    private func startSentinel(_ index: Int) async throws {
        let port = sentinelPorts[index]
        // A sentinel rewrites its configuration file as it learns: each has its own.
        let file = dataDirectory.appendingPathComponent("sentinel-\(index).conf")
        try """
            port \(port)
            bind 127.0.0.1
            dir \(dataDirectory.path)
            sentinel monitor \(RedisTopology.master) 127.0.0.1 \(redisPorts[0]) \(RedisTopology.quorum)
            sentinel down-after-milliseconds \(RedisTopology.master) \(RedisTopology.downAfterMs)
            sentinel failover-timeout \(RedisTopology.master) 3000

            """.write(to: file, atomically: true, encoding: .utf8)
        let process = try launch("redis-sentinel", try Executable.find("redis-server"), [file.path, "--sentinel"])
        sentinels[index] = process
        try await waitUntil("redis-sentinel :\(port) answers PING", while: process) {
            (try? await self.runTool("redis-cli", ["-p", String(port), "PING"]))?.hasPrefix("PONG") == true
        }
    }
}

extension LocalCluster {
    /// A running redis-server of the cluster: its port and process id (the bench reads its CPU).
    package struct RedisNode: Sendable {
        package var port: Int
        package var pid: Int32
    }

    /// The redis-servers running now, in the order of `redisPorts`.
    package func runningRedisNodes() -> [RedisNode] {
        zip(redisPorts, redisNodes).compactMap { port, process in
            guard let process, process.isRunning else { return nil }
            return RedisNode(port: port, pid: process.pid)
        }
    }
}

import Foundation
import LocalServers
import RedisClient

#if canImport(Glibc)
import Glibc
#endif

/// The `cluster` topology: three primaries with a replica each, the pipeline on the one slot of
/// its prefix (`primary` is the node that owns that slot now), and the move of that slot to
/// another primary while receipts flow (`reshard`). A primary's kill is `failover()`, shared
/// with the sentinel topology; it sees the promotion through `agreedSlotOwner`.
extension LocalCluster {
    /// The slot every pipeline key is in (its prefix is one hash tag).
    package nonisolated var pipelineSlot: Int { RedisClusterSlot.of(keys.workers) }

    /// What one move of the pipeline's slot took.
    package struct Reshard: Sendable, Codable {
        /// `redis-cli` (`redis-cli --cluster reshard` of the source's slots up to the pipeline's)
        /// or `half-moved` (by hand, the slot held half-moved `heldMs` so `ASK` and `TRYAGAIN` are met).
        package var by: String
        /// The pipeline's keys the move carried.
        package var keys: Int
        package var heldMs: Int
        /// From the start of the move until the slot's new owner had every key and its replica was in sync.
        package var seconds: Double
    }

    func startRedisCluster() async throws {
        for node in redisPorts.indices { try await startRedisNode(node, replicaOf: nil) }
        try await RedisClusterLaunch(
            ports: redisPorts, directory: dataDirectory, replicasEach: RedisTopology.clusterReplicasEach,
            nodeTimeout: RedisTopology.clusterNodeTimeout
        ).join()
        primary = try await waitFor("every node names the owner of slot \(pipelineSlot)", while: nil) { await self.agreedSlotOwner() }
    }

    /// Starts every node that is down (each rejoins as what the cluster says it is), then waits
    /// until the cluster is whole again.
    func healRedisCluster() async throws {
        for node in redisPorts.indices where redisNodes[node]?.isRunning != true { try await startRedisNode(node, replicaOf: nil) }
        try await waitUntilClusterIsWhole()
    }

    /// Moves the pipeline's slot from its primary to another (`pick` chooses which) while the
    /// pipeline runs. With `holdHalfMoved`, by hand as `redis-cli` does it (importing, migrating,
    /// keys in batches, then the new owner named everywhere), with half the keys moved and the
    /// slot held so that long; without, by `redis-cli --cluster reshard`.
    package func reshard(holdHalfMoved hold: Duration?, pick: Int) async throws -> Reshard {
        let start = ContinuousClock.now
        let checked = primaryPort
        try await waitUntil("redis-cli --cluster check passes", while: nil) {
            (try? await Executable.run("redis-cli", ["--cluster", "check", "127.0.0.1:\(checked)"]))?.status == 0
        }
        let slot = pipelineSlot
        let source = primaryPort
        var primaries: [Int] = []
        for port in redisPorts where port != source {
            if (try? await role(ofNodeAt: port)) == "master" { primaries.append(port) }
        }
        guard !primaries.isEmpty else { throw ClusterError("no other primary to move slot \(slot) to") }
        let target = primaries[pick % primaries.count]
        let sourceID = try await nodeID(at: source), targetID = try await nodeID(at: target)
        let keys = try await pipeline([RedisCommand("CLUSTER", "COUNTKEYSINSLOT", String(slot))], onNodeAt: source).first?.int ?? 0
        if let hold {
            try await moveSlot(slot, from: (source, sourceID), to: (target, targetID), holdHalfMoved: hold)
        } else {
            // redis-cli takes the source's lowest slots first: as many as it has up to this one.
            let owned = try await ownedSlots(ofNodeAt: source)
            let count = owned.filter { $0 <= slot }.count
            let (status, said) = try await Executable.run(
                "redis-cli",
                ["--cluster", "reshard", "127.0.0.1:\(source)", "--cluster-from", sourceID, "--cluster-to", targetID,
                 "--cluster-slots", String(count), "--cluster-yes"])
            guard status == 0 else { throw ClusterError("redis-cli --cluster reshard failed:\n\(said.suffix(2000))") }
        }
        let moved = redisPorts.firstIndex(of: target)!
        primary = try await waitFor("every node names :\(target) the owner of slot \(slot)", while: nil) {
            await self.agreedSlotOwner().flatMap { $0 == moved ? $0 : nil }
        }
        try await waitUntilReplicasCaughtUp(port: target)
        return Reshard(
            by: hold == nil ? "redis-cli" : "half-moved", keys: Int(keys), heldMs: Int(hold?.milliseconds ?? 0),
            seconds: (ContinuousClock.now - start).seconds)
    }

    /// The steps of `redis-cli --cluster reshard` for one slot, with a hold half-way.
    private func moveSlot(_ slot: Int, from source: (port: Int, id: String), to target: (port: Int, id: String), holdHalfMoved hold: Duration) async throws {
        let slotText = String(slot)
        try await expectOK(RedisCommand("CLUSTER", "SETSLOT", slotText, "IMPORTING", source.id), on: target.port)
        try await expectOK(RedisCommand("CLUSTER", "SETSLOT", slotText, "MIGRATING", target.id), on: source.port)
        let all = try await keysInSlot(slot, on: source.port, count: 1_000_000)
        try await migrate(Array(all.prefix(all.count / 2)), from: source.port, to: target.port)
        try await Task.sleep(for: hold)
        while true {
            let batch = try await keysInSlot(slot, on: source.port, count: 100)
            if batch.isEmpty { break }
            try await migrate(batch, from: source.port, to: target.port)
        }
        // As redis-cli: the target first (it must own the slot before the source redirects there).
        try await expectOK(RedisCommand("CLUSTER", "SETSLOT", slotText, "NODE", target.id), on: target.port)
        try await expectOK(RedisCommand("CLUSTER", "SETSLOT", slotText, "NODE", target.id), on: source.port)
        for port in redisPorts where port != source.port && port != target.port {
            guard (try? await role(ofNodeAt: port)) == "master" else { continue }
            try await expectOK(RedisCommand("CLUSTER", "SETSLOT", slotText, "NODE", target.id), on: port)
        }
    }

    private func migrate(_ keys: [String], from source: Int, to target: Int) async throws {
        for batch in stride(from: 0, to: keys.count, by: 100).map({ Array(keys[$0..<min($0 + 100, keys.count)]) }) {
            let command = RedisCommand(["MIGRATE", "127.0.0.1", String(target), "", "0", "5000", "KEYS"] + batch)
            let reply = try await pipeline([command], onNodeAt: source).first
            // NOKEY: every key of the batch left the source meanwhile (a script deleted it).
            guard reply?.string == "OK" || reply?.string == "NOKEY" else { throw ClusterError("MIGRATE to :\(target) failed: \(String(describing: reply))") }
        }
    }

    private func keysInSlot(_ slot: Int, on port: Int, count: Int) async throws -> [String] {
        let reply = try await pipeline([RedisCommand("CLUSTER", "GETKEYSINSLOT", String(slot), String(count))], onNodeAt: port).first
        guard let keys = reply?.array?.compactMap(\.string) else { throw ClusterError("CLUSTER GETKEYSINSLOT on :\(port): \(String(describing: reply))") }
        return keys
    }

    private func expectOK(_ command: RedisCommand, on port: Int) async throws {
        let reply = try await pipeline([command], onNodeAt: port).first
        guard reply?.string == "OK" else { throw ClusterError("\(command) on :\(port): \(String(describing: reply))") }
    }

    private func nodeID(at port: Int) async throws -> String {
        guard let id = try await pipeline([RedisCommand("CLUSTER", "MYID")], onNodeAt: port).first?.string else {
            throw ClusterError("CLUSTER MYID on :\(port) failed")
        }
        return id
    }

    private func role(ofNodeAt port: Int) async throws -> String? {
        try await pipeline([RedisCommand("ROLE")], onNodeAt: port).first?.array?.first?.string
    }

    /// The slots the node on `port` says it owns.
    private func ownedSlots(ofNodeAt port: Int) async throws -> [Int] {
        let nodes = try await pipeline([RedisCommand("CLUSTER", "NODES")], onNodeAt: port).first?.string ?? ""
        guard let mine = nodes.split(separator: "\n").first(where: { $0.split(separator: " ").count > 2 && $0.split(separator: " ")[2].contains("myself") })
        else { throw ClusterError("CLUSTER NODES on :\(port) names no `myself`") }
        return Self.slots(inNodesLine: mine)
    }

    /// The slots a `CLUSTER NODES` line gives its node (`0-5460`, `886`; a slot being moved,
    /// `[886->-id]`, is not counted).
    static func slots(inNodesLine line: Substring) -> [Int] {
        line.split(separator: " ").dropFirst(8).filter { !$0.hasPrefix("[") }.flatMap { range -> [Int] in
            let ends = range.split(separator: "-").compactMap { Int($0) }
            return ends.count == 2 ? Array(ends[0]...ends[1]) : ends
        }
    }

    /// The node every running node names as the owner of the pipeline's slot (a primary that
    /// is not failed and says it is a primary), when they agree.
    func agreedSlotOwner() async -> Int? {
        var named: Set<Int> = []
        for (node, port) in redisPorts.enumerated() where redisNodes[node]?.isRunning == true {
            guard let nodes = try? await pipeline([RedisCommand("CLUSTER", "NODES")], onNodeAt: port).first?.string else { return nil }
            let owners = nodes.split(separator: "\n").filter { line in
                let fields = line.split(separator: " ")
                return fields.count > 8 && fields[2].contains("master") && !fields[2].contains("fail")
                    && Self.slots(inNodesLine: line).contains(pipelineSlot)
            }
            guard owners.count == 1, let address = owners[0].split(separator: " ")[1].split(separator: "@").first,
                let owner = address.split(separator: ":").last.flatMap({ Int($0) }).flatMap(redisPorts.firstIndex(of:))
            else { return nil }
            named.insert(owner)
        }
        guard named.count == 1, let owner = named.first, (try? await role(ofNodeAt: redisPorts[owner])) == "master" else { return nil }
        return owner
    }

    /// Every running node says the cluster is whole, each primary has its replica online and in
    /// sync, and every node names the same owner of the pipeline's slot.
    func waitUntilClusterIsWhole() async throws {
        let running = redisPorts.indices.filter { redisNodes[$0]?.isRunning == true }.map { redisPorts[$0] }
        try await RedisClusterLaunch.waitUntilWhole(ports: running, replicasEach: RedisTopology.clusterReplicasEach, within: .seconds(60))
        primary = try await waitFor("every node names the owner of slot \(pipelineSlot)", while: nil) { await self.agreedSlotOwner() }
        for port in running {
            if (try? await role(ofNodeAt: port)) == "master" { try await waitUntilReplicasCaughtUp(port: port) }
        }
    }

    /// Waits until every replica of the primary on `port` has what the primary had when asked.
    private func waitUntilReplicasCaughtUp(port: Int) async throws {
        let info = (try? await pipeline([RedisCommand("INFO", "replication")], onNodeAt: port).first?.string) ?? ""
        guard let line = info.split(separator: "\r\n").first(where: { $0.hasPrefix("master_repl_offset:") }),
            let target = Int(line.dropFirst("master_repl_offset:".count))
        else { throw ClusterError("no master_repl_offset from :\(port)") }
        try await waitUntil("the replicas of :\(port) reach offset \(target)", while: nil) {
            let now = (try? await self.pipeline([RedisCommand("INFO", "replication")], onNodeAt: port).first?.string) ?? ""
            let offsets = now.split(separator: "\r\n").filter { $0.hasPrefix("slave") && $0.contains("offset=") }.compactMap { line in
                line.split(separator: ",").first { $0.hasPrefix("offset=") }.flatMap { Int($0.dropFirst("offset=".count)) }
            }
            return !offsets.isEmpty && offsets.allSatisfy { $0 >= target }
        }
    }
}

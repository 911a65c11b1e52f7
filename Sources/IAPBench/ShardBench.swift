import AsyncHTTPClient
import ClusterHarness
import Foundation
import IAPStages
import PipelineCore
import RedisClient

/// The `shards` scenario: the whole pipeline (intake, one process per stage, apple-sim at 0 ms)
/// on a Redis Cluster of three primaries with a replica each, once on one shard (`IAP_PREFIX={iap}`:
/// every key on one slot) and once over `buckets` buckets on all three; end to end at full speed.
/// Per node: its role, Redis CPU and commands per receipt, memory and keys afterwards; overall:
/// receipts/s and round trips per receipt (parts included).
package struct ShardBench: Sendable {
    package var receipts: Int
    package var buckets: Int

    package init(receipts: Int = 6000, buckets: Int = RedisSettings.clusterBuckets) {
        self.receipts = receipts
        self.buckets = buckets
    }

    package func run(settings: BenchSettings, http: HTTPClient, progress: @Sendable (String) -> Void) async throws -> [ShardBenchResult] {
        var results: [ShardBenchResult] = []
        for buckets in [1, buckets] {
            let result = try await measure(buckets: buckets, settings: settings, http: http)
            progress(String(
                format: "shards: %@ — %.0f receipts/s, %.2f round trips and %.1f commands per receipt, Redis CPU %.3f ms per receipt",
                result.name, result.receiptsPerSecond, result.roundTripsPerReceipt, result.commandsPerReceipt, result.redisCPUMsPerReceipt))
            results.append(result)
        }
        return results
    }

    private func measure(buckets: Int, settings: BenchSettings, http: HTTPClient) async throws -> ShardBenchResult {
        let name = buckets == 1 ? "cluster-1-shard" : "cluster-\(buckets)-buckets"
        let directory = settings.workDirectory.appendingPathComponent("shards-\(name)")
        try? FileManager.default.removeItem(at: directory)
        // The bench's production defaults (as lat0-v1-nopersist), on a cluster.
        var cluster = Bench.clusterSettings(
            BenchScenario(name: name, appleLatencyMs: 0, verifiers: 1, concurrency: 64, durability: .none), settings: settings)
        cluster.topology = .cluster
        cluster.buckets = buckets
        let local = try LocalCluster(settings: cluster, directory: directory, http: http)
        return try await local.measured("shards \(name)") { redis in
            try await measure(name: name, buckets: buckets, local, redis, http)
        }
    }

    private func measure(
        name: String, buckets: Int, _ local: LocalCluster, _ redis: RedisClient, _ http: HTTPClient
    ) async throws -> ShardBenchResult {
        let client = local.loadClient(http)
        let streams = local.keys.everyBucket.map(\.fulfilment)
        func granted() async throws -> Int {
            try await redis.pipeline(streams.map { RedisCommand("XLEN", $0) }).reduce(0) { $0 + Int($1.int ?? 0) }
        }
        func waitFor(_ count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(300)
            while try await granted() < count {
                guard ContinuousClock.now < deadline else { throw BenchError("shards \(name): \(count) grants did not come") }
                try await Task.sleep(for: .milliseconds(20))  // a benchmark's watch, not a test's synchronisation
            }
        }
        let warm = 300
        try refusedNone(await client.submitAll(BenchReceipt.batch("warm-\(name)", warm), perSecond: nil, concurrency: 16), name)
        try await waitFor(warm)

        let nodes = await local.runningRedisNodes()
        let before = try await nodes.asyncMap { try await NodeReading.read($0) }
        let started = ContinuousClock.now
        try refusedNone(await client.submitAll(BenchReceipt.batch("shard-\(name)", receipts), perSecond: nil, concurrency: 64), name)
        try await waitFor(warm + receipts)
        let elapsed = (ContinuousClock.now - started) / .seconds(1)
        let after = try await nodes.asyncMap { try await NodeReading.read($0) }

        var rows: [ShardBenchResult.Node] = []
        for (index, node) in nodes.enumerated() {
            let commands = after[index].commands - before[index].commands
            rows.append(.init(
                port: node.port, role: after[index].role,
                cpuMsPerReceipt: (after[index].cpuSeconds - before[index].cpuSeconds) * 1000 / Double(receipts),
                commandsPerReceipt: Double(commands.pipelineCommands) / Double(receipts),
                roundTripsPerReceipt: Double(commands.roundTrips) / Double(receipts),
                usedMemoryMB: Double(after[index].usedMemory) / 1_048_576, keys: after[index].keys))
        }
        let primaries = rows.filter { $0.role == "master" }
        return ShardBenchResult(
            name: name, buckets: buckets, receipts: receipts, receiptsPerSecond: Double(receipts) / elapsed,
            roundTripsPerReceipt: primaries.reduce(0) { $0 + $1.roundTripsPerReceipt },
            commandsPerReceipt: primaries.reduce(0) { $0 + $1.commandsPerReceipt },
            redisCPUMsPerReceipt: rows.reduce(0) { $0 + $1.cpuMsPerReceipt }, nodes: rows)
    }

    private func refusedNone(_ submissions: [LoadClient.Submission], _ name: String) throws {
        if let refused = submissions.first(where: { $0.ticket == nil }) {
            throw BenchError("shards \(name): the intake did not accept a receipt: \(refused.error ?? "?")")
        }
    }

    /// One node's counters: CPU of its process, commands run, role, memory and keys.
    private struct NodeReading {
        var cpuSeconds: Double
        var commands: CommandStats
        var role: String
        var usedMemory: Int
        var keys: Int

        static func read(_ node: LocalCluster.RedisNode) async throws -> NodeReading {
            let connection = RedisConnection(configuration: try RedisConfiguration(url: "redis://127.0.0.1:\(node.port)"))
            defer { Task { await connection.close() } }
            let replies = try await connection.pipeline([
                RedisCommand("INFO", "commandstats"), RedisCommand("INFO", "replication"), RedisCommand("INFO", "memory"),
                RedisCommand("DBSIZE"),
            ])
            func field(_ info: String?, _ name: String) -> String {
                (info ?? "").split(whereSeparator: \.isNewline).first { $0.hasPrefix(name + ":") }.map { String($0.dropFirst(name.count + 1)) } ?? ""
            }
            return NodeReading(
                cpuSeconds: ProcessUsage.read(pid: node.pid)?.cpuSeconds ?? 0, commands: CommandStats(info: replies[0].string ?? ""),
                role: field(replies[1].string, "role"), usedMemory: Int(field(replies[2].string, "used_memory")) ?? 0,
                keys: Int(replies[3].int ?? 0))
        }
    }
}

/// What the `shards` scenario measured on one layout.
package struct ShardBenchResult: Sendable, Codable {
    package struct Node: Sendable, Codable {
        package var port: Int
        /// `master` or `slave`, as the node says.
        package var role: String
        package var cpuMsPerReceipt: Double
        package var commandsPerReceipt: Double
        package var roundTripsPerReceipt: Double
        package var usedMemoryMB: Double
        package var keys: Int
    }

    package var name: String
    package var buckets: Int
    package var receipts: Int
    package var receiptsPerSecond: Double
    /// Over the primaries (replicas run what replication sends them, not clients' requests).
    package var roundTripsPerReceipt: Double
    package var commandsPerReceipt: Double
    /// Every node's, replicas included.
    package var redisCPUMsPerReceipt: Double
    package var nodes: [Node]
}

private extension Array where Element: Sendable {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for element in self { out.append(try await transform(element)) }
        return out
    }
}

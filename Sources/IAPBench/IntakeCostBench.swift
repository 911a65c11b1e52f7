import AsyncHTTPClient
import ClusterHarness
import Foundation
import LocalServers
import PipelineCore
import RedisClient

/// The `intake-cost` scenario: what one accepted receipt costs the intake in instructions (counted
/// by valgrind's callgrind in the intake and in redis-server), beside the same submissions to
/// apple-sim's bare Hummingbird route (`/floor/v1/receipts`, counted the same way in apple-sim):
/// the least any intake on Hummingbird costs. The intake alone phase of a cluster scenario times
/// the same thing; its CPU ms a receipt vary by ±30 % here, its instructions by about a per cent.
///
/// No worker runs. Both servers take `warmUp` receipts first (connections opened, caches filled),
/// their counts are zeroed, and `receipts` go to each in turn from the same client.
package struct IntakeCostBench: Sendable {
    package static let name = "intake-cost"
    package var receipts: Int
    /// Requests the client keeps open at once.
    package var concurrency: Int
    static let warmUp = 200

    package init(receipts: Int = 2000, concurrency: Int = 16) {
        self.receipts = receipts
        self.concurrency = concurrency
    }

    package func run(settings: BenchSettings, http: HTTPClient, progress: @Sendable (String) -> Void) async throws -> IntakeCostBenchResult {
        for tool in ["valgrind", "callgrind_control", "objcopy"] { _ = try Executable.find(tool) }
        let directory = settings.workDirectory.appendingPathComponent(Self.name)
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var cluster = Bench.clusterSettings(
            BenchScenario(name: Self.name, appleLatencyMs: 0, verifiers: 1, concurrency: 1, durability: .none), settings: settings)
        let counted = ["iap-intake", "apple-sim"]
        cluster.binDirectory = try await StageCostBench.binDirectory(from: settings.binDirectory, in: directory, stripping: counted)
        let preload = ["env", "LD_PRELOAD=\(cluster.binDirectory.appendingPathComponent(StageCostBench.preload).path)"]
        cluster.launchPrefix = ["redis-server": StageCostBench.callgrind(directory.appendingPathComponent("redis.callgrind"), instrumented: false)]
        for name in counted {
            cluster.launchPrefix[name] = preload + StageCostBench.callgrind(directory.appendingPathComponent("\(name).callgrind"), instrumented: true)
        }
        let local = try LocalCluster(settings: cluster, directory: directory, http: http)
        return try await local.measured(Self.name, workers: false) { redis in
            progress("\(Self.name): \(receipts) receipts to the intake, then to apple-sim's bare route, \(concurrency) at a time; logs in \(directory.path)/logs")
            return try await measure(local, redis, http: http, directory: directory)
        }
    }

    private func measure(_ local: LocalCluster, _ redis: RedisClient, http: HTTPClient, directory: URL) async throws -> IntakeCostBenchResult {
        let processes = await local.processesByKind()
        guard let intake = processes["iap-intake"]?.first?.pid, let apple = processes["apple-sim"]?.first?.pid,
              let server = processes["redis-server"]?.first?.pid else {
            throw BenchError("\(Self.name): no intake, apple-sim or redis-server to count")
        }
        let client = local.loadClient(http)
        let floor = LoadClient(http: http, intakeURL: local.appleURL + "/floor")
        try await client.submitAll(BenchReceipt.batch("intake-cost-warm", Self.warmUp), perSecond: nil, concurrency: concurrency).allAccepted(in: Self.name)
        try await floor.submitAll(BenchReceipt.batch("floor-cost-warm", Self.warmUp), perSecond: nil, concurrency: concurrency).allAccepted(in: Self.name)

        for pid in [intake, server] { try await StageCostBench.control(["-z", String(pid)]) }
        try await StageCostBench.control(["-i", "on", String(server)])
        let before = try await redis.commandStats()
        try await client.submitAll(BenchReceipt.batch(Self.name, receipts), perSecond: nil, concurrency: concurrency).allAccepted(in: Self.name)
        for pid in [intake, server] { try await StageCostBench.control(["-d", String(pid)]) }
        try await StageCostBench.control(["-i", "off", String(server)])
        let commands = try await redis.commandStats() - before

        try await StageCostBench.control(["-z", String(apple)])
        try await floor.submitAll(BenchReceipt.batch("floor-cost", receipts), perSecond: nil, concurrency: concurrency).allAccepted(in: Self.name)
        try await StageCostBench.control(["-d", String(apple)])

        let per = { (value: Int) in Double(value) / Double(receipts) }
        return IntakeCostBenchResult(
            receipts: receipts, concurrency: concurrency,
            intakeInstructionsPerReceipt: per(try StageCostBench.totals(dumpedIn: directory, named: "iap-intake.callgrind")),
            redisInstructionsPerReceipt: per(try StageCostBench.totals(dumpedIn: directory, named: "redis.callgrind")),
            floorInstructionsPerReceipt: per(try StageCostBench.totals(dumpedIn: directory, named: "apple-sim.callgrind")),
            commandsPerReceipt: per(commands.pipelineCommands), roundTripsPerReceipt: per(commands.roundTrips))
    }
}

/// What the `intake-cost` scenario counted (`--json` gives every field).
package struct IntakeCostBenchResult: Sendable, Codable {
    package var receipts: Int
    package var concurrency: Int
    package var intakeInstructionsPerReceipt: Double
    package var redisInstructionsPerReceipt: Double
    /// apple-sim's bare Hummingbird route, the same receipts from the same client.
    package var floorInstructionsPerReceipt: Double
    package var commandsPerReceipt: Double
    package var roundTripsPerReceipt: Double

    /// The intake's instructions over the bare route's.
    package var overFloor: Double { intakeInstructionsPerReceipt / max(floorInstructionsPerReceipt, 1) }

    package var summary: String {
        String(
            format: "intake %.0f instructions a receipt (%.2f× a bare Hummingbird route's %.0f), redis-server %.0f, %.2f commands and %.2f round trips a receipt",
            intakeInstructionsPerReceipt, overFloor, floorInstructionsPerReceipt, redisInstructionsPerReceipt, commandsPerReceipt,
            roundTripsPerReceipt)
    }

    package static func table(_ result: IntakeCostBenchResult) -> String {
        TextTable.render(
            header: ["intake cost", "receipts", "open", "intake a receipt", "bare route", "ratio", "redis-server", "commands", "round trips"],
            rows: [[
                "intake", "\(result.receipts)", "\(result.concurrency)", String(format: "%.0f", result.intakeInstructionsPerReceipt),
                String(format: "%.0f", result.floorInstructionsPerReceipt), String(format: "%.2f", result.overFloor),
                String(format: "%.0f", result.redisInstructionsPerReceipt), String(format: "%.2f", result.commandsPerReceipt),
                String(format: "%.2f", result.roundTripsPerReceipt),
            ]])
    }
}

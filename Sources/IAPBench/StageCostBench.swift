import AsyncHTTPClient
import ClusterHarness
import Foundation
import LocalServers
import PipelineCore
import RedisClient

/// The `verify-cost`, `dedupe-cost` and `grant-cost` scenarios: what one job of a stage costs in
/// instructions, counted by valgrind's callgrind in that stage's worker and in redis-server.
/// Instructions, unlike seconds, hardly depend on what else the machine does, so two builds compare
/// within a per cent or two where their receipts/s vary by ±30 % (the A/B of a change to a stage).
///
/// The intake takes `jobs` receipts, the stages before the counted one (real processes) make its
/// jobs, and its queue is parked under another name while its worker starts under callgrind. Its
/// counts and Redis's are zeroed once it is registered, the queue is put back, and both are read
/// when the last job has moved on (the next queue holds them all; for the grant, the last grant's
/// event is written): start-up is left out, and so is the rest of the pipeline's work. At a
/// concurrency above 1, batching follows the worker's speed (callgrind slows it about fifty times)
/// and the machine's load.
package struct StageCostBench: Sendable {
    /// The stage counted: verify, dedupe or grant.
    package var stage: Stage
    package var jobs: Int
    /// `IAP_CONCURRENCY` of the workers. At 1, runs with the same round trips a job agree within
    /// 1 %; a granter's run makes about 2.0 of them or about 1.8 (some steps then share a call), and
    /// its count moves with them by up to 5 %, so the result prints them beside the counts. Above
    /// 1, how many jobs share a round trip follows the machine's load, and so do the counts.
    package var concurrency: Int

    package init(stage: Stage, jobs: Int = 2000, concurrency: Int = 1) {
        precondition([.verify, .dedupe, .grant].contains(stage), "a receipt's three stages are counted")
        self.stage = stage
        self.jobs = jobs
        self.concurrency = concurrency
    }

    /// The scenario's name: `grant-cost` for the grant stage.
    package var name: String { "\(stage.rawValue)-cost" }

    package func run(settings: BenchSettings, http: HTTPClient, progress: @Sendable (String) -> Void) async throws -> StageCostBenchResult {
        for tool in ["valgrind", "callgrind_control", "objcopy"] { _ = try Executable.find(tool) }
        let directory = settings.workDirectory.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var cluster = Bench.clusterSettings(
            BenchScenario(name: name, appleLatencyMs: 0, verifiers: 1, concurrency: concurrency, durability: .none), settings: settings)
        let executable = LocalCluster.executable(of: stage)
        cluster.binDirectory = try await Self.binDirectory(from: settings.binDirectory, in: directory, stripping: [executable])
        cluster.launchPrefix = [
            "redis-server": Self.callgrind(directory.appendingPathComponent("redis.callgrind"), instrumented: false),
            executable: ["env", "LD_PRELOAD=\(cluster.binDirectory.appendingPathComponent(Self.preload).path)"]
                + Self.callgrind(directory.appendingPathComponent("worker.callgrind"), instrumented: true),
        ]
        let local = try LocalCluster(settings: cluster, directory: directory, http: http)
        return try await local.measured(name, workers: false) { redis in
            progress("\(name): \(jobs) receipts through the intake and the stages before \(stage.rawValue) (concurrency \(concurrency)); logs in \(directory.path)/logs")
            return try await measure(local, redis, http: http, directory: directory, progress: progress)
        }
    }

    /// The library the counted worker runs with under valgrind (`CSigsuspendCopy`: valgrind 3.19 stops
    /// a Swift program whose main thread ends).
    static let preload = "libSigsuspendCopy.so"

    /// The built executables, linked from `built`, but for copies of the counted ones without their
    /// debug information: valgrind 3.19 cannot read the DWARF 5 that Swift writes, and counts without it.
    static func binDirectory(from built: URL, in directory: URL, stripping counted: [String]) async throws -> URL {
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        guard FileManager.default.fileExists(atPath: built.appendingPathComponent(preload).path) else {
            throw BenchError("\(built.path)/\(preload) is missing: build the package first")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: built.path) where !counted.contains(name) {
            try FileManager.default.createSymbolicLink(at: bin.appendingPathComponent(name), withDestinationURL: built.appendingPathComponent(name))
        }
        for executable in counted {
            let (status, output) = try await Executable.run(
                "objcopy", ["--strip-debug", built.appendingPathComponent(executable).path, bin.appendingPathComponent(executable).path])
            guard status == 0 else { throw BenchError("objcopy --strip-debug \(executable): \(output)") }
        }
        return bin
    }

    static func callgrind(_ file: URL, instrumented: Bool) -> [String] {
        ["valgrind", "--tool=callgrind", "--instr-atstart=\(instrumented ? "yes" : "no")", "--callgrind-out-file=\(file.path)"]
    }

    private func measure(
        _ local: LocalCluster, _ redis: RedisClient, http: HTTPClient, directory: URL, progress: @Sendable (String) -> Void
    ) async throws -> StageCostBenchResult {
        let keys = local.keys
        let submissions = await local.loadClient(http).submitAll(BenchReceipt.batch(name, jobs), perSecond: nil, concurrency: 16)
        if let refused = submissions.first(where: { $0.ticket == nil }) {
            throw BenchError("\(name): the intake did not accept a receipt: \(refused.error ?? "?")")
        }
        for before in Self.stages.prefix(while: { $0 != stage }) {
            _ = try await local.addWorker(before)
            try await waitFor("the \(before.rawValue) stage", jobs) { try await done(by: before, keys, redis) }
        }

        let parked = keys.queue(stage) + ":parked"
        _ = try await redis.send("RENAME", keys.queue(stage), parked)
        let counted = try await local.addWorker(stage)
        guard let workerPID = await local.worker(stage, at: counted)?.pid,
              let redisPID = await local.processesByKind()["redis-server"]?.first?.pid else {
            throw BenchError("\(name): no \(stage.rawValue) worker or redis-server to count")
        }
        progress("\(name): worker \(workerPID) and redis-server \(redisPID) under callgrind; working")
        try await Self.control(["-z", String(workerPID)])
        try await Self.control(["-z", String(redisPID)])
        try await Self.control(["-i", "on", String(redisPID)])
        let before = try await redis.commandStats()
        let base = try await done(by: stage, keys, redis)
        _ = try await redis.send("RENAME", parked, keys.queue(stage))
        try await waitFor("the \(stage.rawValue) stage", base + jobs, every: .milliseconds(500)) { try await done(by: stage, keys, redis) }
        try await Self.control(["-d", String(workerPID)])
        try await Self.control(["-d", String(redisPID)])
        try await Self.control(["-i", "off", String(redisPID)])
        let commands = try await redis.commandStats() - before
        let workerInstructions = try Self.totals(dumpedIn: directory, named: "worker.callgrind")
        let redisInstructions = try Self.totals(dumpedIn: directory, named: "redis.callgrind")
        let per = { (value: Int) in Double(value) / Double(jobs) }
        return StageCostBenchResult(
            stage: stage.rawValue, jobs: jobs, concurrency: concurrency, workerInstructionsPerJob: per(workerInstructions),
            redisInstructionsPerJob: per(redisInstructions), commandsPerJob: per(commands.pipelineCommands), roundTripsPerJob: per(commands.roundTrips),
            commandsByName: commands.calls.filter { !CommandStats.benchOwn.contains($0.key) }.mapValues(per))
    }

    /// A receipt's stages, in order.
    private static let stages: [Stage] = [.verify, .dedupe, .grant]

    /// How many jobs `stage` has passed on: its next queue's length, and for the grant the
    /// fulfilment events written (the bench's receipts are each one new purchase: every one moves on).
    private func done(by stage: Stage, _ keys: RedisKeys, _ redis: RedisClient) async throws -> Int {
        switch stage {
        case .verify: try await redis.integer("LLEN", keys.queue(.dedupe))
        case .dedupe: try await redis.integer("LLEN", keys.queue(.grant))
        default: try await redis.integer("XLEN", keys.fulfilment)
        }
    }

    private func waitFor(
        _ what: String, _ target: Int, every pause: Duration = .milliseconds(100), _ count: () async throws -> Int
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(900)
        while try await count() < target {
            guard ContinuousClock.now < deadline else { throw BenchError("\(name): \(what) did not finish its \(jobs) jobs") }
            try await Task.sleep(for: pause)
        }
    }

    static func control(_ arguments: [String]) async throws {
        let (status, output) = try await Executable.run("callgrind_control", arguments)
        guard status == 0 else { throw BenchError("callgrind_control \(arguments.joined(separator: " ")): \(output)") }
    }

    /// The `totals:` of the one dump (`<name>.1`) callgrind wrote into `directory`.
    static func totals(dumpedIn directory: URL, named name: String) throws -> Int {
        let file = directory.appendingPathComponent(name + ".1")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { throw BenchError("no callgrind dump at \(file.path)") }
        guard let line = text.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("totals:") }),
              let value = line.split(separator: " ").last.flatMap({ Int($0) }) else {
            throw BenchError("no totals in \(file.path)")
        }
        return value
    }


}

/// What a `<stage>-cost` scenario counted (`--json` gives every field).
package struct StageCostBenchResult: Sendable, Codable {
    /// verify, dedupe or grant.
    package var stage: String
    package var jobs: Int
    package var concurrency: Int
    package var workerInstructionsPerJob: Double
    package var redisInstructionsPerJob: Double
    package var commandsPerJob: Double
    package var roundTripsPerJob: Double
    /// Redis commands a job by name, the scripts' own included (`evalsha` is the round trips' scripts).
    package var commandsByName: [String: Double]

    package var instructionsPerJob: Double { workerInstructionsPerJob + redisInstructionsPerJob }

    package var summary: String {
        String(
            format: "%.0f instructions a job (worker %.0f, redis-server %.0f), %.2f commands and %.2f round trips a job",
            instructionsPerJob, workerInstructionsPerJob, redisInstructionsPerJob, commandsPerJob, roundTripsPerJob)
    }

    package static func table(_ results: [StageCostBenchResult]) -> String {
        TextTable.render(
            header: ["stage cost", "jobs", "concurrency", "instructions a job", "worker", "redis-server", "commands a job", "round trips a job"],
            rows: results.map { result in
                [
                    result.stage, "\(result.jobs)", "\(result.concurrency)", String(format: "%.0f", result.instructionsPerJob),
                    String(format: "%.0f", result.workerInstructionsPerJob), String(format: "%.0f", result.redisInstructionsPerJob),
                    String(format: "%.2f", result.commandsPerJob), String(format: "%.2f", result.roundTripsPerJob),
                ]
            })
    }
}

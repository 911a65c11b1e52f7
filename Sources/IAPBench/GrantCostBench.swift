import AsyncHTTPClient
import ClusterHarness
import Foundation
import LocalServers
import PipelineCore
import RedisClient

/// The `grant-cost` scenario: what one grant costs in instructions, counted by valgrind's callgrind
/// in the granter and in redis-server. Instructions, unlike seconds, hardly depend on what else the
/// machine does, so two builds compare within a per cent or two where their receipts/s vary by
/// ±30 % (the A/B of a change to the grant step).
///
/// The intake takes `jobs` receipts, the verifier and the deduper (real processes) make their grant
/// jobs, and the grant queue is parked under another name while a granter starts under callgrind.
/// Its counts and Redis's are zeroed once it is registered, the queue is put back, and both are
/// read when the last grant's event is written: start-up is left out, and so is the rest of the
/// pipeline's work. At a concurrency above 1, batching follows the granter's speed (callgrind slows
/// it about fifty times) and the machine's load.
package struct GrantCostBench: Sendable {
    package var jobs: Int
    /// `IAP_CONCURRENCY` of the workers. At 1, runs with the same round trips a grant agree within
    /// 1 %; a run makes about 2.0 of them or about 1.8 (some steps then share a call), and the
    /// granter's count moves with them by up to 5 %, so the result prints them beside the counts.
    /// Above 1, how many jobs share a round trip follows the machine's load, and so do the counts.
    package var concurrency: Int

    package init(jobs: Int = 2000, concurrency: Int = 1) {
        self.jobs = jobs
        self.concurrency = concurrency
    }

    package func run(settings: BenchSettings, http: HTTPClient, progress: @Sendable (String) -> Void) async throws -> GrantCostBenchResult {
        for tool in ["valgrind", "callgrind_control", "objcopy"] { _ = try Executable.find(tool) }
        let directory = settings.workDirectory.appendingPathComponent("grant-cost")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var cluster = Bench.clusterSettings(
            BenchScenario(name: "grant-cost", appleLatencyMs: 0, verifiers: 1, concurrency: concurrency, durability: .none), settings: settings)
        cluster.binDirectory = try await Self.binDirectory(from: settings.binDirectory, in: directory)
        cluster.launchPrefix = [
            "redis-server": Self.callgrind(directory.appendingPathComponent("redis.callgrind"), instrumented: false),
            "iap-granter": ["env", "LD_PRELOAD=\(cluster.binDirectory.appendingPathComponent(Self.preload).path)"]
                + Self.callgrind(directory.appendingPathComponent("granter.callgrind"), instrumented: true),
        ]
        let local = try LocalCluster(settings: cluster, directory: directory, http: http)
        let redis = RedisClient(configuration: try RedisConfiguration(url: local.redisURL), poolSize: 2)
        do {
            try await local.start(workers: false)
            progress("grant-cost: \(jobs) receipts through the intake, verify and dedupe (concurrency \(concurrency)); logs in \(directory.path)/logs")
            let result = try await measure(local, redis, http: http, directory: directory, progress: progress)
            await redis.close()
            let unclean = await local.stop() + (await local.crashes())
            guard unclean.isEmpty else { throw BenchError("grant-cost: \(unclean.joined(separator: "; "))") }
            return result
        } catch {
            await redis.close()
            _ = await local.stop()
            throw error
        }
    }

    /// The library the granter runs with under valgrind (`CSigsuspendCopy`: valgrind 3.19 stops
    /// a Swift program whose main thread ends).
    static let preload = "libSigsuspendCopy.so"

    /// The built executables, linked from `built`, but for a copy of the granter without its debug
    /// information: valgrind 3.19 cannot read the DWARF 5 that Swift writes, and counts without it.
    private static func binDirectory(from built: URL, in directory: URL) async throws -> URL {
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        guard FileManager.default.fileExists(atPath: built.appendingPathComponent(preload).path) else {
            throw BenchError("grant-cost: \(built.path)/\(preload) is missing: build the package first")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: built.path) where name != "iap-granter" {
            try FileManager.default.createSymbolicLink(at: bin.appendingPathComponent(name), withDestinationURL: built.appendingPathComponent(name))
        }
        let (status, output) = try await Executable.run(
            "objcopy", ["--strip-debug", built.appendingPathComponent("iap-granter").path, bin.appendingPathComponent("iap-granter").path])
        guard status == 0 else { throw BenchError("objcopy --strip-debug iap-granter: \(output)") }
        return bin
    }

    private static func callgrind(_ file: URL, instrumented: Bool) -> [String] {
        ["valgrind", "--tool=callgrind", "--instr-atstart=\(instrumented ? "yes" : "no")", "--callgrind-out-file=\(file.path)"]
    }

    private func measure(
        _ local: LocalCluster, _ redis: RedisClient, http: HTTPClient, directory: URL, progress: @Sendable (String) -> Void
    ) async throws -> GrantCostBenchResult {
        let keys = local.keys
        let submissions = await local.loadClient(http).submitAll(BenchReceipt.batch("grant-cost", jobs), perSecond: nil, concurrency: 16)
        if let refused = submissions.first(where: { $0.ticket == nil }) {
            throw BenchError("grant-cost: the intake did not accept a receipt: \(refused.error ?? "?")")
        }
        _ = try await local.addWorker(.verify)
        try await waitFor("the verifier", jobs) { try await redis.integer("LLEN", keys.queue(.dedupe)) }
        _ = try await local.addWorker(.dedupe)
        try await waitFor("the deduper", jobs) { try await redis.integer("LLEN", keys.queue(.grant)) }

        let parked = keys.queue(.grant) + ":parked"
        _ = try await redis.send("RENAME", keys.queue(.grant), parked)
        let granter = try await local.addWorker(.grant)
        guard let granterPID = await local.worker(.grant, at: granter)?.pid,
              let redisPID = await local.processesByKind()["redis-server"]?.first?.pid else {
            throw BenchError("grant-cost: no granter or redis-server to count")
        }
        progress("grant-cost: granter \(granterPID) and redis-server \(redisPID) under callgrind; granting")
        try await control(["-z", String(granterPID)])
        try await control(["-z", String(redisPID)])
        try await control(["-i", "on", String(redisPID)])
        let before = try await redis.commandStats()
        let base = try await redis.integer("XLEN", keys.fulfilment)
        _ = try await redis.send("RENAME", parked, keys.queue(.grant))
        try await waitFor("the granter", base + jobs, every: .milliseconds(500)) { try await redis.integer("XLEN", keys.fulfilment) }
        try await control(["-d", String(granterPID)])
        try await control(["-d", String(redisPID)])
        try await control(["-i", "off", String(redisPID)])
        let commands = try await redis.commandStats() - before
        let granterInstructions = try Self.totals(dumpedIn: directory, named: "granter.callgrind")
        let redisInstructions = try Self.totals(dumpedIn: directory, named: "redis.callgrind")
        let per = { (value: Int) in Double(value) / Double(jobs) }
        return GrantCostBenchResult(
            jobs: jobs, concurrency: concurrency, granterInstructionsPerGrant: per(granterInstructions), redisInstructionsPerGrant: per(redisInstructions),
            commandsPerGrant: per(commands.pipelineCommands), roundTripsPerGrant: per(commands.roundTrips),
            commandsByName: commands.calls.filter { !CommandStats.benchOwn.contains($0.key) }.mapValues(per))
    }

    private func waitFor(
        _ what: String, _ target: Int, every pause: Duration = .milliseconds(100), _ count: () async throws -> Int
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(900)
        while try await count() < target {
            guard ContinuousClock.now < deadline else { throw BenchError("grant-cost: \(what) did not finish its \(jobs) jobs") }
            try await Task.sleep(for: pause)
        }
    }

    private func control(_ arguments: [String]) async throws {
        let (status, output) = try await Executable.run("callgrind_control", arguments)
        guard status == 0 else { throw BenchError("callgrind_control \(arguments.joined(separator: " ")): \(output)") }
    }

    /// The `totals:` of the one dump (`<name>.1`) callgrind wrote into `directory`.
    static func totals(dumpedIn directory: URL, named name: String) throws -> Int {
        let file = directory.appendingPathComponent(name + ".1")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { throw BenchError("grant-cost: no dump at \(file.path)") }
        guard let line = text.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("totals:") }),
              let value = line.split(separator: " ").last.flatMap({ Int($0) }) else {
            throw BenchError("grant-cost: no totals in \(file.path)")
        }
        return value
    }


}

/// What the `grant-cost` scenario counted (`--json` gives every field).
package struct GrantCostBenchResult: Sendable, Codable {
    package var jobs: Int
    package var concurrency: Int
    package var granterInstructionsPerGrant: Double
    package var redisInstructionsPerGrant: Double
    package var commandsPerGrant: Double
    package var roundTripsPerGrant: Double
    /// Redis commands a grant by name, the scripts' own included (`evalsha` is the round trips' scripts).
    package var commandsByName: [String: Double]

    package var instructionsPerGrant: Double { granterInstructionsPerGrant + redisInstructionsPerGrant }

    package var summary: String {
        String(
            format: "%.0f instructions a grant (granter %.0f, redis-server %.0f), %.2f commands and %.2f round trips a grant",
            instructionsPerGrant, granterInstructionsPerGrant, redisInstructionsPerGrant, commandsPerGrant, roundTripsPerGrant)
    }

    package var table: String {
        TextTable.render(
            header: ["grant-cost", "grants", "concurrency", "instructions a grant", "granter", "redis-server", "commands a grant", "round trips a grant"],
            rows: [[
                "callgrind", "\(jobs)", "\(concurrency)", String(format: "%.0f", instructionsPerGrant), String(format: "%.0f", granterInstructionsPerGrant),
                String(format: "%.0f", redisInstructionsPerGrant), String(format: "%.2f", commandsPerGrant),
                String(format: "%.2f", roundTripsPerGrant),
            ]])
    }
}

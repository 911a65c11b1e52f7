import AsyncHTTPClient
import ClusterHarness
import Foundation
import PipelineCore
import RedisClient

/// One scenario, phase by phase: the intake alone, each stage alone on a full queue, end to end
/// at full speed, end to end at half of that, idle, and redis-benchmark on the same server.
struct ScenarioRun {
    let scenario: BenchScenario
    let settings: BenchSettings
    let http: HTTPClient
    let progress: @Sendable (String) -> Void

    /// `/proc` readings of every process, by pid, with the process's kind.
    private typealias Readings = [Int32: (kind: String, usage: ProcessUsage)]

    /// Receipts/s of a run and each receipt's submit → granted time.
    private struct Outcome {
        var perSecond: Double
        var latenciesMs: [Double]
    }

    func measure() async throws -> ScenarioResult {
        let directory = settings.workDirectory.appendingPathComponent(scenario.name)
        try? FileManager.default.removeItem(at: directory)
        let cluster = try LocalCluster(
            settings: Bench.clusterSettings(scenario, settings: settings), directory: directory, http: http)
        return try await cluster.measured(scenario.name, workers: false) { redis in
            progress("\(scenario.name): redis :\(cluster.redisPort), logs in \(directory.path)/logs")
            return try await measure(cluster, redis)
        }
    }

    private func measure(_ cluster: LocalCluster, _ redis: RedisClient) async throws -> ScenarioResult {
        let client = cluster.loadClient(http)
        let keys = cluster.keys
        try await client.submitAll(BenchReceipt.batch("warm", 100), perSecond: nil, concurrency: 16).allAccepted(in: scenario.name)

        let intakeBatch = BenchReceipt.batch("intake", settings.intakeReceipts)
        let intakeCPU = try await cpuSeconds(cluster, "iap-intake")
        let intakeStart = ContinuousClock.now
        try await client.submitAll(intakeBatch, perSecond: nil, concurrency: settings.clientConcurrency).allAccepted(in: scenario.name)
        let intakeRate = Double(intakeBatch.count) / seconds(since: intakeStart)
        let intakeAlone = (try await cpuSeconds(cluster, "iap-intake") - intakeCPU) * 1_000_000 / Double(intakeBatch.count)
        let floor = try await hummingbirdFloor(cluster, receipts: intakeBatch.count)

        // A slow scenario gets about three seconds of jobs per stage; the rest wait for nothing.
        var jobs = try await redis.integer("LLEN", keys.queue(.verify))
        if let bound = scenario.verifyBound, Int(bound * 3) < jobs {
            jobs = max(300, Int(bound * 3))
            _ = try await redis.send("LTRIM", keys.queue(.verify), String(-jobs), "-1")
        }
        var stageRates: [String: Double] = [:]
        stageRates["verify"] = try await aloneRate(cluster, .verify, processes: scenario.verifiers, jobs: jobs) {
            try await redis.integer("LLEN", keys.queue(.dedupe))
        }
        stageRates["dedupe"] = try await aloneRate(cluster, .dedupe, processes: 1, jobs: jobs) {
            try await redis.integer("LLEN", keys.queue(.grant))
        }
        stageRates["grant"] = try await aloneRate(cluster, .grant, processes: 1, jobs: jobs) {
            try await redis.integer("XLEN", keys.fulfilment)
        }

        let slowest = stageRates.values.min() ?? 1000
        let count = min(settings.endToEndReceipts, max(300, Int(slowest * settings.endToEndSeconds)))
        let commandsBefore = try await redis.commandStats()
        let before = await usage(cluster)
        let peak = try await endToEnd(BenchReceipt.batch("e2e", count), perSecond: nil, client, redis, keys)
        let commands = try await redis.commandStats() - commandsBefore
        let after = await usage(cluster)

        let halfRate = max(1, Int(peak.perSecond / 2))
        let half = try await endToEnd(
            BenchReceipt.batch("half", max(100, Int(Double(halfRate) * settings.halfPeakSeconds))),
            perSecond: halfRate, client, redis, keys)

        var light = try await lightLoad(rate: min(settings.lightRate, halfRate), client, cluster, redis, keys)

        let idleStart = await usage(cluster)
        let idleCommandsBefore = try await redis.commandStats()
        try await Task.sleep(for: .seconds(settings.idleSeconds))
        let idleCommands = try await redis.commandStats() - idleCommandsBefore
        let idleEnd = await usage(cluster)
        light.idleRoundTripsPerSecond = Double(idleCommands.roundTrips) / max(settings.idleSeconds, 0.001)
        let stagesOnly = try await stagesOnly(count, cluster, redis, keys)
        guard try await redis.integer("ZCARD", keys.retry) == 0, try await redis.integer("LLEN", keys.dead) == 0 else {
            throw BenchError("\(scenario.name): jobs were retried or dead-lettered; see the logs")
        }

        let csv = try await cluster.runTool("redis-benchmark", [
            "-h", "127.0.0.1", "-p", String(cluster.redisPort), "-t", "lpush,rpop", "-n", String(settings.ceilingRequests),
            "-c", "50", "--csv",
        ])
        let ceiling = try RedisCeiling(csv: csv)

        let processes = kindUsage(before: before, after: after, idleStart: idleStart, idleEnd: idleEnd, receipts: count)
        let perReceipt = { (value: Int) in Double(value) / Double(count) }
        let latency = LatencySummary(half.latenciesMs)
        return ScenarioResult(
            scenario: scenario, endToEndPerSecond: peak.perSecond, endToEndReceipts: count, intakePerSecond: intakeRate,
            stagePerSecond: stageRates, verifyShareOfBound: scenario.verifyBound.map { stageRates["verify"]! / $0 },
            peakLatency: LatencySummary(peak.latenciesMs), halfPeakPerSecond: half.perSecond, latency: latency,
            pipelineAdded: latency.minus(Double(scenario.appleLatencyMs)),
            commandsPerReceipt: perReceipt(commands.pipelineCommands), roundTripsPerReceipt: perReceipt(commands.roundTrips),
            commandsByName: commands.calls.filter { !CommandStats.benchOwn.contains($0.key) }.mapValues(perReceipt),
            redisCPUMsPer1000: processes["redis-server"].map { $0.cpuMsPer1000 } ?? 0, processes: processes,
            ceiling: ceiling, ceilingShare: peak.perSecond * perReceipt(commands.pipelineCommands) / ceiling.opsPerSecond,
            stagesOnlyPerSecond: stagesOnly.perSecond, stagesOnlyCPUMsPer1000: stagesOnly.cpuMsPer1000,
            stagesOnlyRoundTripsPerReceipt: stagesOnly.roundTrips, lightLoad: light,
            intakeAloneCPUMsPer1000: intakeAlone, hummingbirdFloorCPUMsPer1000: floor)
    }

    /// CPU seconds so far of the one process of `kind`.
    private func cpuSeconds(_ cluster: LocalCluster, _ kind: String) async throws -> Double {
        guard let process = await cluster.processesByKind()[kind]?.first, let usage = ProcessUsage.read(pid: process.pid) else {
            throw BenchError("\(scenario.name): no \(kind) to read")
        }
        return usage.cpuSeconds
    }

    /// The same submissions to apple-sim's bare Hummingbird route (`AppleSimulator.floorPath`),
    /// with the same client: its CPU per 1,000 (ms) is what any Hummingbird intake costs at least.
    private func hummingbirdFloor(_ cluster: LocalCluster, receipts: Int) async throws -> Double {
        let floor = LoadClient(http: http, intakeURL: cluster.appleURL + "/floor")
        try await floor.submitAll(BenchReceipt.batch("floor-warm", 100), perSecond: nil, concurrency: 16).allAccepted(in: scenario.name)
        let before = try await cpuSeconds(cluster, "apple-sim")
        try await floor.submitAll(BenchReceipt.batch("floor", receipts), perSecond: nil, concurrency: settings.clientConcurrency).allAccepted(in: scenario.name)
        return (try await cpuSeconds(cluster, "apple-sim") - before) * 1_000_000 / Double(receipts)
    }

    /// End to end at a fixed rate (`settings.lightRate`, or half of the peak if that is lower), the
    /// same on every run and every machine: latency, the pipeline's CPU per receipt (intake,
    /// stages, Redis) and round trips when jobs come one by one and nothing batches.
    private func lightLoad(
        rate: Int, _ client: LoadClient, _ cluster: LocalCluster, _ redis: RedisClient, _ keys: RedisKeys
    ) async throws -> ScenarioResult.LightLoad {
        let count = max(100, Int(Double(rate) * settings.halfPeakSeconds))
        let before = await usage(cluster)
        let commandsBefore = try await redis.commandStats()
        let outcome = try await endToEnd(BenchReceipt.batch("light", count), perSecond: rate, client, redis, keys)
        let commands = try await redis.commandStats() - commandsBefore
        let after = await usage(cluster)
        let pipeline: Set<String> = ["iap-intake", "iap-verifier", "iap-deduper", "iap-granter", "redis-server"]
        var cpu = 0.0
        for (pid, end) in after where pipeline.contains(end.kind) {
            cpu += end.usage.cpuSeconds - (before[pid]?.usage.cpuSeconds ?? end.usage.cpuSeconds)
        }
        let latency = LatencySummary(outcome.latenciesMs)
        return .init(
            perSecond: Double(rate), latency: latency, pipelineAdded: latency.minus(Double(scenario.appleLatencyMs)),
            pipelineCPUMsPer1000: cpu * 1_000_000 / Double(count), roundTripsPerReceipt: Double(commands.roundTrips) / Double(count),
            idleRoundTripsPerSecond: 0)
    }

    /// Stages only: `jobs` receipts queued for verify straight in Redis (`submit_receipt` from 64
    /// callers, as the Go peer's loader LPUSHes its jobs), drained by the running stages while they
    /// come; no HTTP intake. Grants per second between 10 % and 90 % done, the three stages' CPU
    /// per 1,000 receipts, and round trips per receipt (the `submit_receipt` calls included).
    private func stagesOnly(
        _ jobs: Int, _ cluster: LocalCluster, _ redis: RedisClient, _ keys: RedisKeys
    ) async throws -> (perSecond: Double, cpuMsPer1000: Double, roundTrips: Double) {
        let store = PipelineStore(redis: redis, keys: keys)
        let batch = BenchReceipt.batch("stages", jobs)
        let base = try await redis.integer("XLEN", keys.fulfilment)
        let before = await usage(cluster)
        let commandsBefore = try await redis.commandStats()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<64 {
                group.addTask {
                    for index in stride(from: lane, to: batch.count, by: 64) {
                        let receipt = batch[index]
                        let job = Job(
                            ticket: "stages-\(index)", userID: receipt.userID, receiptData: receipt.receiptData, productID: nil,
                            transactionID: nil, enqueuedAt: currentTimeMs())
                        _ = try await store.submit(job, receiptDigest: "stages-\(index)", ttl: .seconds(3600))
                    }
                }
            }
            try await group.waitForAll()
        }
        let perSecond = try await rate(of: "the stages-only phase", jobs: jobs) {
            try await redis.integer("XLEN", keys.fulfilment) - base
        }
        let after = await usage(cluster)
        let commands = try await redis.commandStats() - commandsBefore
        let stages: Set<String> = ["iap-verifier", "iap-deduper", "iap-granter"]
        var cpu = 0.0
        for (pid, end) in after where stages.contains(end.kind) {
            cpu += end.usage.cpuSeconds - (before[pid]?.usage.cpuSeconds ?? end.usage.cpuSeconds)
        }
        return (perSecond, cpu * 1_000_000 / Double(jobs), Double(commands.roundTrips) / Double(jobs))
    }

    // MARK: phases

    /// Starts `processes` workers of `stage` on a queue of `jobs` and returns their jobs/s
    /// between 10 % and 90 % done (process start-up and the tail stay out of it).
    private func aloneRate(
        _ cluster: LocalCluster, _ stage: Stage, processes: Int, jobs: Int, done: () async throws -> Int
    ) async throws -> Double {
        for _ in 0..<processes { _ = try await cluster.addWorker(stage, waitUntilRegistered: false) }
        // The stage empties its queue before the next one starts, so that one has all the jobs.
        return try await rate(of: "the \(stage) stage", jobs: jobs, done: done)
    }

    /// Waits until `done` reaches `jobs` and returns the jobs/s between 10 % and 90 % done (over
    /// the whole wait when so few jobs pass 10 % and 90 % between two looks: a smoke run).
    private func rate(of what: String, jobs: Int, done: () async throws -> Int) async throws -> Double {
        let start = ContinuousClock.now
        var low: (count: Int, at: ContinuousClock.Instant)?
        var high: (count: Int, at: ContinuousClock.Instant)?
        let deadline = ContinuousClock.now + .seconds(300)
        while true {
            guard ContinuousClock.now < deadline else { throw BenchError("\(scenario.name): \(what) did not finish") }
            let count = try await done()
            if low == nil, count >= jobs / 10 { low = (count, .now) }
            if high == nil, count >= jobs * 9 / 10 { high = (count, .now) }
            if count >= jobs { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        guard let low, let high else { throw BenchError("\(scenario.name): too few jobs to time \(what)") }
        if high.count > low.count, high.at > low.at { return Double(high.count - low.count) / ((high.at - low.at) / .seconds(1)) }
        return Double(high.count) / (max(high.at - start, .milliseconds(1)) / .seconds(1))
    }

    /// Submits `batch` (paced at `perSecond`, or as fast as the client goes), waits until each is
    /// granted and reads each ticket's grant time.
    private func endToEnd(
        _ batch: [BenchReceipt], perSecond: Int?, _ client: LoadClient, _ redis: RedisClient, _ keys: RedisKeys
    ) async throws -> Outcome {
        let base = try await redis.integer("XLEN", keys.fulfilment)
        let submissions = try await client.submitAll(batch, perSecond: perSecond, concurrency: settings.clientConcurrency).allAccepted(in: scenario.name)
        let deadline = ContinuousClock.now + .seconds(300)
        while try await redis.integer("XLEN", keys.fulfilment) < base + batch.count {
            guard ContinuousClock.now < deadline else { throw BenchError("\(scenario.name): receipts were not all granted") }
            try await Task.sleep(for: .milliseconds(10))
        }
        var latencies: [Double] = []
        var lastGrantMs = 0.0
        for chunk in stride(from: 0, to: submissions.count, by: 500).map({ submissions[$0..<min($0 + 500, submissions.count)] }) {
            let replies = try await redis.pipeline(chunk.map { RedisCommand(["HMGET", keys.ticket($0.ticket!), "status", "updated_at"]) })
            for (submission, reply) in zip(chunk, replies) {
                let fields = reply.array ?? []
                guard fields.first?.string == "granted", let grantedMs = fields.last?.string.flatMap(Double.init) else {
                    throw BenchError("\(scenario.name): ticket \(submission.ticket!) ended \(fields.first?.string ?? "nowhere")")
                }
                latencies.append(grantedMs - submission.sentAtMs)
                lastGrantMs = max(lastGrantMs, grantedMs)
            }
        }
        let firstSentMs = submissions.map(\.sentAtMs).min() ?? 0
        return Outcome(perSecond: Double(batch.count) / max(0.001, (lastGrantMs - firstSentMs) / 1000), latenciesMs: latencies)
    }

    // MARK: readings

    /// Every process of the cluster and the bench itself (the load client), by pid.
    private func usage(_ cluster: LocalCluster) async -> Readings {
        var readings: Readings = [:]
        for (kind, processes) in await cluster.processesByKind() {
            for process in processes {
                if let usage = ProcessUsage.read(pid: process.pid) { readings[process.pid] = (kind, usage) }
            }
        }
        if let own = ProcessUsage.read(pid: getpid()) { readings[getpid()] = ("load-client", own) }
        return readings
    }

    private func kindUsage(
        before: Readings, after: Readings, idleStart: Readings, idleEnd: Readings, receipts: Int
    ) -> [String: ScenarioResult.KindUsage] {
        var kinds: [String: ScenarioResult.KindUsage] = [:]
        let megabyte = 1024.0 * 1024
        for (pid, end) in after {
            let busy = end.usage.cpuSeconds - (before[pid]?.usage.cpuSeconds ?? end.usage.cpuSeconds)
            let idle = idleEnd[pid].map { $0.usage.cpuSeconds - (idleStart[pid]?.usage.cpuSeconds ?? $0.usage.cpuSeconds) } ?? 0
            let last = idleEnd[pid]?.usage ?? end.usage
            var entry = kinds[end.kind] ?? .init(
                processes: 0, cpuSeconds: 0, cpuMsPer1000: 0, peakRSSMB: 0, idleCPUPercent: 0, idleRSSMB: 0, idleAnonymousMB: 0)
            entry.processes += 1
            entry.cpuSeconds += busy
            entry.cpuMsPer1000 = entry.cpuSeconds * 1000 * 1000 / Double(receipts)
            entry.peakRSSMB = max(entry.peakRSSMB, Double(last.peakRSSBytes) / megabyte)
            entry.idleCPUPercent = max(entry.idleCPUPercent, idle / settings.idleSeconds * 100)
            entry.idleRSSMB = max(entry.idleRSSMB, Double(last.rssBytes) / megabyte)
            entry.idleAnonymousMB = max(entry.idleAnonymousMB, Double(last.anonymousRSSBytes) / megabyte)
            kinds[end.kind] = entry
        }
        return kinds
    }

    private func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start) / .seconds(1)
    }
}

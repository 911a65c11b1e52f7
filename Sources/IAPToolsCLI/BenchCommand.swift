import IAPCLI
import AsyncHTTPClient
import PipelineCore
import IAPStages
import ArgumentParser
import ClusterHarness
import Foundation
import IAPBench

package struct BenchCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "iap-bench",
        abstract: "The benchmark: real processes on loopback, figures per scenario.",
        discussion: """
            Per scenario: starts redis-server, apple-sim, the intake and the stage workers from --bin-dir, and \
            measures the intake alone, each stage alone, the pipeline end to end at full speed and at half of it \
            (latency), end to end at a fixed light rate (latency, CPU and round trips when nothing batches), idle processes, and redis-benchmark's LPUSH/RPOP ceiling on the same server. \
            Scenarios: apple-sim latency 0 and 50 ms × 1 and 2 verifiers × Redis without persistence and with \
            appendfsync always, then 1, 2, 4 and 8 verifiers of concurrency 8 at 50 ms (scaling), and one verifier \
            of concurrency 256 at 50 ms (as many requests open as the Go peer). \
            Scenario jws: StoreKit 2 signed transactions verified per CPU second on one thread, chain cache warm. \
            Scenario jobs: a job of each stage read and written (its JSON), CPU µs each, on one thread. \
            Scenario redis-client: the Redis client alone (64 callers, SET) beside redis-benchmark on the same server \
            (redis-client-cluster: on a Redis Cluster of 3 primaries, beside redis-benchmark --cluster). \
            Scenarios verify-cost, dedupe-cost and grant-cost: instructions a job in that stage's worker and redis-server, counted by \
            valgrind's callgrind over --cost-jobs jobs (exact where receipts/s are not: the A/B of a change to a stage). \
            Scenario intake-cost: the intake's instructions a receipt (and redis-server's) over --cost-jobs receipts, beside apple-sim's bare \
            Hummingbird route taking the same receipts. \
            Scenario wait: --wait-clients clients waiting on GET /v1/receipts/{ticket}?wait=30 on one intake, then the workers start. \
            Scenario retention: Apple's retention performance test (apple-sim) against the intake's real-time endpoint, --retention-requests requests 10 then 64 at a time.
            """)

    @Option(help: "Scenarios to run, comma-separated names (default: all; see --list).") var scenarios: String?
    @Flag(help: "List the scenarios and exit.") var list = false
    @Option(help: "Distinct signed transactions of the jws scenario.") var jwsTokens = 2000
    @Option(help: "Waiting clients of the wait scenario.") var waitClients = 5000
    @Option(help: "Subscriptions the rechecks scenario schedules (1 % of them due).") var recheckSubscriptions = 1_000_000
    @Option(help: "Receipts of each layout of the shards scenario.") var shardReceipts = 6000
    @Option(help: "Buckets of the shards scenario's second layout (over three primaries).") var buckets = 64
    @Option(help: "Undelivered notifications the notifications scenario backfills.") var notificationCount = 10_000
    @Option(help: "Real-time requests of each run of the retention scenario's performance test.") var retentionRequests = 2000
    @Option(help: "Apple Accounts the history scenario syncs, at each size.") var historyCustomers = 200
    @Option(help: "Jobs each of the verify-cost, dedupe-cost and grant-cost scenarios counts (intake-cost: receipts).") var costJobs = 2000
    @Option(help: "IAP_CONCURRENCY of the cost scenarios' workers (1: the fewest steps sharing a call; compare runs of equal round trips).")
    var costConcurrency = 1
    @Option(help: "Receipts the intake takes alone.") var intakeReceipts = 3000
    @Option(help: "Most receipts of the end-to-end run (it is sized to about --e2e-seconds).") var e2eReceipts = 6000
    @Option(help: "Seconds the end-to-end run aims at.") var e2eSeconds = 5.0
    @Option(help: "Seconds of load at half of the peak (where latency is read), and at the fixed light rate.")
    var halfPeakSeconds = 4.0
    @Option(help: "Receipts/s of the fixed-rate (light load) phase; half of the peak if that is lower.") var lightRate = 500
    @Option(help: "Concurrent client requests.") var clientConcurrency = 64
    @Option(help: "Requests per redis-benchmark test.") var ceilingRequests = 200_000
    @Option(help: "Folder with the built executables (default: this executable's).") var binDir: String?
    @Option(help: "Folder for each scenario's Redis data and logs.") var workDir = "data/bench"
    @Flag(help: "The intake checks signatures (IAP_CLIENT_KEYS_FILE) and the client signs every request.") var signed = false
    @Flag(help: "Print the results as JSON instead of tables.") var json = false

    package init() {}

    private static let all = BenchScenario.matrix + BenchScenario.scaling
    private static let jwsName = "jws"
    private static let jobsName = "jobs"
    private static let redisClientName = "redis-client"
    private static let redisClientClusterName = "redis-client-cluster"
    private static let waitName = "wait"
    private static let rechecksName = "rechecks"
    private static let shardsName = "shards"
    private static let notificationsName = "notifications"
    private static let historyName = "history"
    /// The cost scenarios, by name: `verify-cost`, `dedupe-cost`, `grant-cost`.
    private static let costs = [Stage.verify, .dedupe, .grant].map { StageCostBench(stage: $0) }
    private static let retentionName = "retention"

    package func validate() throws {
        guard (100...100_000).contains(costJobs) else { throw ValidationError("--cost-jobs: 100 to 100000") }
        guard (1...1024).contains(costConcurrency) else { throw ValidationError("--cost-concurrency: 1 to 1024") }
        guard jwsTokens >= 1 else { throw ValidationError("--jws-tokens: at least 1") }
        guard shardReceipts >= 300 else { throw ValidationError("--shard-receipts: at least 300") }
        guard (20...1_000_000).contains(notificationCount) else { throw ValidationError("--notification-count: 20 to 1000000") }
        guard (10...100_000).contains(retentionRequests) else { throw ValidationError("--retention-requests: 10 to 100000") }
        guard (2...BucketLayout.maxCount).contains(buckets) else { throw ValidationError("--buckets: 2 to \(BucketLayout.maxCount)") }
        guard (1...15000).contains(waitClients) else { throw ValidationError("--wait-clients: 1 to 15000") }
        guard (100...20_000_000).contains(recheckSubscriptions) else { throw ValidationError("--recheck-subscriptions: 100 to 20000000") }
        guard intakeReceipts >= 300, e2eReceipts >= 300 else { throw ValidationError("--intake-receipts and --e2e-receipts: at least 300") }
        guard e2eSeconds > 0, halfPeakSeconds > 0, lightRate >= 1, clientConcurrency >= 1, ceilingRequests >= 1000 else {
            throw ValidationError("--e2e-seconds and --half-peak-seconds must be positive, --light-rate at least 1, --client-concurrency at least 1, --ceiling-requests at least 1000")
        }
        _ = try selected()
    }

    /// The scenarios run without a cluster of their own, by name.
    private static let standalone = [
        jwsName, jobsName, redisClientName, redisClientClusterName, waitName, rechecksName, shardsName, notificationsName, historyName,
        retentionName,
    ] + costs.map(\.name) + [IntakeCostBench.name]

    /// The cluster scenarios chosen, and the names of the standalone ones.
    private struct Chosen {
        var clusters: [BenchScenario] = []
        var names: Set<String> = []

        func has(_ name: String) -> Bool { names.contains(name) }
    }

    private func selected() throws -> Chosen {
        guard let scenarios else { return Chosen(clusters: Self.all, names: Set(Self.standalone)) }
        var chosen = Chosen()
        for name in scenarios.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if Self.standalone.contains(name) {
                chosen.names.insert(name)
            } else if let scenario = Self.all.first(where: { $0.name == name }) {
                chosen.clusters.append(scenario)
            } else {
                throw ValidationError(
                    "unknown scenario '\(name)'; known: \((Self.all.map(\.name) + Self.standalone).joined(separator: ", "))")
            }
        }
        return chosen
    }

    package func run() async throws {
        if list {
            printScenarios()
            return
        }
        let chosen = try selected()
        var settings = BenchSettings(binDirectory: HarnessCommand.binDirectory(binDir), workDirectory: URL(fileURLWithPath: workDir))
        settings.scenarios = chosen.clusters
        settings.intakeReceipts = intakeReceipts
        settings.endToEndReceipts = e2eReceipts
        settings.endToEndSeconds = e2eSeconds
        settings.halfPeakSeconds = halfPeakSeconds
        settings.lightRate = lightRate
        settings.clientConcurrency = clientConcurrency
        settings.ceilingRequests = ceilingRequests
        settings.signRequests = signed

        let interrupts = HarnessCommand.killChildrenOnInterrupt()
        defer { _ = interrupts }
        let log = HarnessCommand.progress
        let started = ContinuousClock.now
        var report = BenchReport(scenarios: [], jws: nil)
        try await runClientBenches(chosen, into: &report, log: log)
        if chosen.has(Self.waitName) {
            let wait = try await WaitBench(clients: waitClients).run(
                binDirectory: settings.binDirectory, workDirectory: settings.workDirectory, progress: log)
            log(String(format: "wait: %d clients, %.0f bytes each on the intake, %.2f %% CPU while waiting, all answered in %.2f s",
                wait.clients, wait.bytesPerWaitingClient, wait.idleCPUPercent, wait.answeredSeconds))
            report.wait = wait
        }
        if chosen.has(Self.rechecksName) {
            let rechecks = try await RecheckBench(subscriptions: recheckSubscriptions, due: max(recheckSubscriptions / 100, 1))
                .run(workDirectory: settings.workDirectory, progress: log)
            log(String(format: "rechecks: %d scheduled, %.0f + %.0f bytes each (schedule + record), %.0f due drained/s",
                rechecks.subscriptions, rechecks.scheduleBytesPerSubscription, rechecks.recordBytesPerSubscription, rechecks.drainPerSecond))
            report.rechecks = rechecks
        }
        if chosen.has(Self.notificationsName) {
            let notifications = try await NotificationHistoryBench(count: notificationCount)
                .run(workDirectory: settings.workDirectory, progress: log)
            log("notifications: \(notifications.summary)")
            report.notifications = notifications
        }
        if chosen.has(Self.retentionName) {
            report.retention = try await RetentionBench(requests: retentionRequests)
                .run(binDirectory: settings.binDirectory, workDirectory: settings.workDirectory, progress: log)
        }
        if chosen.has(Self.historyName) {
            report.history = try await HistoryBench(customers: historyCustomers).run(workDirectory: settings.workDirectory, progress: log)
        }
        let costs = Self.costs.filter { chosen.has($0.name) }
        if chosen.has(Self.shardsName) || !costs.isEmpty || chosen.has(IntakeCostBench.name) {
            var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(2)))
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: clientConcurrency)
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            do {
                for var bench in costs {
                    bench.jobs = costJobs
                    bench.concurrency = costConcurrency
                    let cost = try await bench.run(settings: settings, http: http, progress: log)
                    log("\(bench.name): \(cost.summary)")
                    report.stageCosts = (report.stageCosts ?? []) + [cost]
                }
                if chosen.has(IntakeCostBench.name) {
                    let cost = try await IntakeCostBench(receipts: costJobs).run(settings: settings, http: http, progress: log)
                    log("\(IntakeCostBench.name): \(cost.summary)")
                    report.intakeCost = cost
                }
                if chosen.has(Self.shardsName) {
                    report.shards = try await ShardBench(receipts: shardReceipts, buckets: buckets).run(settings: settings, http: http, progress: log)
                }
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
        if !chosen.clusters.isEmpty {
            report.scenarios = try await Bench(settings: settings, progress: log).run()
        }
        log("bench: \(report.scenarios.count + (report.jws == nil ? 0 : 1) + (report.jobs == nil ? 0 : 1) + (report.redisClient == nil ? 0 : 1) + (report.redisClientCluster == nil ? 0 : 1) + (report.wait == nil ? 0 : 1) + (report.rechecks == nil ? 0 : 1) + (report.shards == nil ? 0 : 1) + (report.notifications == nil ? 0 : 1) + (report.history == nil ? 0 : 1) + (report.stageCosts?.count ?? 0) + (report.intakeCost == nil ? 0 : 1) + (report.retention == nil ? 0 : 1)) scenarios in \(Int((ContinuousClock.now - started) / .seconds(1))) s")
        if json {
            try HarnessCommand.printJSON(report)
        } else {
            print(BenchTable.render(report))
        }
    }

    /// What each scenario measures (`--list`).
    private func printScenarios() {
        for scenario in Self.all {
            print("\(scenario.name): apple latency \(scenario.appleLatencyMs) ms, \(scenario.verifiers) verifier(s) × concurrency \(scenario.concurrency), redis \(scenario.durability == .none ? "no persistence" : "appendfsync \(scenario.durability.rawValue)")")
        }
        print("\(Self.jwsName): StoreKit 2 signed transactions verified on one thread, chain cache warm (no processes)")
        print("\(Self.jobsName): a job's JSON read and written, per kind, on one thread (no processes)")
        print("\(Self.redisClientName): the Redis client alone, 64 callers sending SET, beside redis-benchmark on the same server")
        print("\(Self.redisClientClusterName): the same on a Redis Cluster of 3 primaries, beside redis-benchmark --cluster")
        print("\(Self.waitName): \(waitClients) clients waiting on ?wait=30 on one intake, then the workers start")
        print("\(Self.shardsName): the pipeline on a Redis Cluster of 3 primaries with a replica each, on one shard ({iap}) then over --buckets buckets: receipts/s, round trips, Redis CPU, memory and keys per node")
        print("\(Self.notificationsName): an idle notification sweep (its cost with nothing to do), then a backfill of \(notificationCount) notifications apple-sim never delivered, and a rerun")
        print("\(Self.historyName): a sync's Apple side: \(historyCustomers) Apple Accounts of 1, 20 and 100 purchases each, each history read whole and verified, then again from its revision (Apple calls and ms per sync)")
        for cost in Self.costs {
            print("\(cost.name): \(costJobs) \(cost.stage.rawValue) jobs done under valgrind's callgrind: instructions a job in the \(LocalCluster.executable(of: cost.stage)) and redis-server, commands and round trips")
        }
        print("\(IntakeCostBench.name): \(costJobs) receipts to the intake, then to apple-sim's bare Hummingbird route, under valgrind's callgrind: instructions a receipt in each (and redis-server), commands and round trips")
        print("\(Self.retentionName): Apple's retention performance test (apple-sim) against the intake's real-time endpoint, \(retentionRequests) requests 10 then 64 at a time, for a subscriber with two years of periods: p50/p90/p99 and the intake's CPU a request")
        print("\(Self.rechecksName): \(recheckSubscriptions) subscriptions scheduled for re-checks, 1 % due, drained in batches (Redis memory, drain rate)")
    }

    /// The benches that start no pipeline: signed transactions verified, the Redis client alone.
    private func runClientBenches(
        _ chosen: Chosen, into report: inout BenchReport, log: @escaping @Sendable (String) -> Void
    ) async throws {
        if chosen.has(Self.jwsName) {
            // First, while nothing else runs on the machine.
            let jws = try await JWSBench(tokens: jwsTokens).run()
            log(String(format: "jws: %.0f verified/s per core (bare ES256 %.0f/s)", jws.jwsPerSecondPerCore, jws.bareES256PerSecond))
            report.jws = jws
        }
        if chosen.has(Self.jobsName) {
            let jobs = JobCodecBench().run()
            log("jobs: \(jobs.summary)")
            report.jobs = jobs
        }
        if chosen.has(Self.redisClientName) {
            let redis = try await RedisClientBench().run(workDirectory: URL(fileURLWithPath: workDir))
            log("redis-client: \(redis.summary)")
            report.redisClient = redis
        }
        if chosen.has(Self.redisClientClusterName) {
            let redis = try await RedisClientBench().runOnCluster(workDirectory: URL(fileURLWithPath: workDir))
            log("redis-client-cluster: \(redis.summary)")
            report.redisClientCluster = redis
        }
    }
}

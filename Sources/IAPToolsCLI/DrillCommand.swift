import IAPCLI
import ArgumentParser
import ClusterHarness
import Foundation
import IAPDrill
import PipelineCore
import IAPStages

package struct DrillCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "iap-drill",
        abstract: "The fault drill: real processes, real faults, then the books: 0 lost, 0 granted twice.",
        discussion: """
            Per trial: starts redis-server (with --topology sentinel: a primary, 2 replicas and 3 sentinels; \
            with --topology cluster: a Redis Cluster of 3 primaries with a replica each), \
            apple-sim, the intake and the stage workers from --bin-dir, submits \
            receipts over HTTP while injecting faults, waits until every ticket is terminal and checks the books. \
            Exits 1 when any trial has a lost ticket, a double grant, a stuck job, a wrong outcome or an anomaly \
            (a crash, an unclean SIGTERM exit).
            """)

    @Option(help: "Trials to run, each on a fresh Redis.") var trials = 10
    @Option(help: "Receipts submitted per trial.") var receipts = 2000
    @Option(help: "Subscriptions apple-sim renews by itself per trial (2 s periods, re-checked and notified).") var subscriptions = 12
    @Option(help: "Players with two years of history before the cutover per trial, half imported, all synced under the faults; 0: no cutover.")
    var adoptionPlayers = 4
    @Flag(help: "Run without iap-webhook (by default it delivers every event to a receiver in the drill that refuses 10 % of them).")
    var noWebhooks = false
    @Option(help: "Faults per second, on average, while receipts are submitted.") var faultRate = 1.0
    @Option(help: "Seed of the receipts and the fault schedule.") var seed: UInt64 = 1
    @Option(help: """
        Fault kinds, comma-separated: \(FaultKind.allCases.map(\.rawValue).joined(separator: ",")) \
        (default: every kind the topology takes: kill-redis with single, failover with sentinel, failover and \
        reshard with cluster).
        """)
    var faults: String?
    @Option(help: "Times each fault kind is injected at least, per trial.") var faultsPerKind = 1
    @Option(help: """
        Redis: single (one redis-server), sentinel (a primary, 2 replicas, 3 sentinels; the pipeline dials the sentinels) \
        or cluster (3 primaries with a replica each; the pipeline runs on the slot of IAP_PREFIX={iap}).
        """)
    var topology = "single"
    @Option(help: "IAP_BUCKETS of the pipeline (1 to 1024; with --topology cluster above 1 the prefix is `iap`, else `{iap}`).") var buckets = 1
    @Option(help: "IAP_REDIS_MIN_REPLICAS of the pipeline (default: 1 with --topology sentinel or cluster, else 0).") var minReplicas: Int?
    @Option(help: """
        For this long before each failover's kill, cut the primary off its replicas, as a partition \
        would (what it takes meanwhile is on it alone when it dies).
        """)
    var replicationGapMs = 0
    @Option(help: "Redis persistence: always (AOF, fsync per write), everysec, none.") var durability = "always"
    @Option(help: "What a Redis kill loses: process (kill -9; the kernel keeps what Redis wrote) or power-cut (AOF writes not yet fsynced are lost too).")
    var redisCrash = "process"
    @Option(help: "apple-sim latency (ms).") var appleLatencyMs = 20
    @Option(help: "Receipts submitted per second.") var rate = 150
    @Option(help: "Concurrent client requests.") var clientConcurrency = 16
    @Option(help: "Processes per stage (verify, dedupe, grant).") var processesPerStage = 2
    @Option(help: "IAP_LEASE_MS of the workers.") var leaseMs = 2000
    @Option(help: "Seconds to wait for the drain before counting tickets as lost.") var drainTimeoutS = 120
    @Option(help: """
        Seconds of one long Apple outage per trial (verifyReceipt answers 503 throughout, a third into the submission; \
        it replaces the short apple-outage faults). With --max-attempts 4 it outlasts every job's attempts: 0 dead letters is the bar.
        """) var appleOutageS = 0
    @Option(help: "IAP_MAX_ATTEMPTS of the workers.") var maxAttempts = 100
    @Option(help: """
        Instead of the trials: a soak of this many minutes (at least 4): steady new purchases (--soak-rate a second), tickets \
        and the stream kept 60 s, Redis's memory sampled every 5 s; it passes when, past the first half, memory grows only by \
        the ledger's bytes per purchase (which it prints).
        """) var soak: Int?
    @Option(help: "Purchases a second during --soak.") var soakRate = 100
    @Option(help: "Folder with the built executables (default: this executable's).") var binDir: String?
    @Option(help: "Folder for each trial's Redis data and logs.") var workDir = "data/drill"
    @Flag(help: "Leave the intake open (no IAP_CLIENT_KEYS_FILE) and send unsigned requests.") var unsigned = false
    @Flag(help: "Print the reports as JSON instead of a table.") var json = false

    package init() {}

    package func validate() throws {
        guard trials >= 1, receipts >= 1 else { throw ValidationError("--trials and --receipts must be at least 1") }
        guard (0...1000).contains(subscriptions) else { throw ValidationError("--subscriptions: 0 to 1000") }
        guard (0...1000).contains(adoptionPlayers) else { throw ValidationError("--adoption-players: 0 to 1000") }
        guard faultRate >= 0, rate >= 1, clientConcurrency >= 1, processesPerStage >= 1 else {
            throw ValidationError("--fault-rate must not be negative; --rate, --client-concurrency, --processes-per-stage at least 1")
        }
        guard leaseMs >= 1000 else { throw ValidationError("--lease-ms must be at least 1000") }
        guard (0...5000).contains(replicationGapMs) else { throw ValidationError("--replication-gap-ms: 0 to 5000") }
        guard faultsPerKind >= 1 else { throw ValidationError("--faults-per-kind must be at least 1") }
        if let soak { guard soak >= 4 else { throw ValidationError("--soak must be at least 4 minutes") } }
        guard soakRate >= 1 else { throw ValidationError("--soak-rate must be at least 1") }
        guard (0...600).contains(appleOutageS) else { throw ValidationError("--apple-outage-s must be within 0...600") }
        guard (1...1000).contains(maxAttempts) else { throw ValidationError("--max-attempts must be within 1...1000") }
        guard let topology = RedisTopology(rawValue: topology) else { throw ValidationError("--topology: single, sentinel or cluster") }
        let replicas = switch topology {
        case .single: 0
        case .sentinel: 2
        case .cluster: 1
        }
        guard (minReplicas ?? 0) >= 0, (minReplicas ?? 0) <= replicas else {
            throw ValidationError("--min-replicas: 0 with --topology single, 0 to 2 with sentinel, 0 or 1 with cluster")
        }
        guard (1...BucketLayout.maxCount).contains(buckets) else {
            throw ValidationError("--buckets: 1 to \(BucketLayout.maxCount)")
        }
        let chosen = try parsedFaults()
        if let wrong = chosen.first(where: { !FaultKind.all(for: topology).contains($0) }) {
            throw ValidationError("--faults: \(wrong.rawValue) does not apply to --topology \(topology.rawValue)")
        }
        guard Durability(rawValue: durability) != nil else { throw ValidationError("--durability: always, everysec or none") }
        guard RedisCrash(rawValue: redisCrash) != nil else { throw ValidationError("--redis-crash: process or power-cut") }
    }

    private func parsedFaults() throws -> [FaultKind] {
        guard let faults else { return FaultKind.all(for: RedisTopology(rawValue: topology) ?? .single) }
        return try faults.split(separator: ",").filter { !$0.isEmpty }.map { name in
            guard let kind = FaultKind(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("unknown fault '\(name)'; known: \(FaultKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
    }

    package func run() async throws {
        var settings = DrillSettings(binDirectory: HarnessCommand.binDirectory(binDir), workDirectory: URL(fileURLWithPath: workDir))
        settings.trials = trials
        settings.receiptsPerTrial = receipts
        settings.subscriptionsPerTrial = subscriptions
        settings.adoptionPlayers = adoptionPlayers
        settings.webhooks = !noWebhooks
        settings.faultRate = faultRate
        settings.seed = seed
        settings.faults = try parsedFaults()
        settings.faultsPerKind = faultsPerKind
        settings.topology = RedisTopology(rawValue: topology)!
        settings.minReplicas = minReplicas
        settings.buckets = buckets
        settings.replicationGap = .milliseconds(replicationGapMs)
        settings.signRequests = !unsigned
        settings.durability = Durability(rawValue: durability)!
        settings.redisCrash = RedisCrash(rawValue: redisCrash)!
        settings.appleLatencyMs = appleLatencyMs
        settings.submitRate = rate
        settings.clientConcurrency = clientConcurrency
        settings.processesPerStage = processesPerStage
        settings.lease = .milliseconds(leaseMs)
        settings.drainTimeoutSeconds = drainTimeoutS
        settings.appleOutage = .seconds(appleOutageS)
        settings.maxAttempts = maxAttempts
        if appleOutageS > 0 { settings.faults.removeAll { $0 == .appleOutage } }

        let interrupts = HarnessCommand.killChildrenOnInterrupt()
        defer { _ = interrupts }
        let log = HarnessCommand.progress
        if let soak {
            let report = try await Soak(settings: settings, minutes: soak, rate: soakRate, progress: log).run()
            print(String(
                format: "soak: %d purchases; the ledger keeps %.0f bytes a purchase; past the first half memory grew %.0f bytes a purchase",
                report.purchases, report.ledgerBytesPerPurchase, report.growthPerPurchase))
            print(report.passed ? "PASS: memory is flat but for the ledger" : "FAIL: memory grows past the ledger")
            if !report.passed { throw ExitCode(1) }
            return
        }
        log(
            "drill: \(trials) × \(receipts) receipts, faults \(settings.faults.map(\.rawValue)) at \(faultRate)/s, "
                + "Redis \(topology) with IAP_REDIS_MIN_REPLICAS=\(settings.cluster.minReplicas)"
                + (buckets > 1 ? " and IAP_BUCKETS=\(buckets)" : "")
                + (replicationGapMs > 0 ? " and a replication gap of \(replicationGapMs) ms before each failover" : "")
                + ", \(unsigned ? "unsigned" : "signed") requests, durability \(durability), "
                + "Redis crash: \(redisCrash), seed \(seed)")
        let reports = try await Drill(settings: settings, progress: log).run()
        if json {
            try HarnessCommand.printJSON(reports)
        } else {
            print(DrillTable.render(reports, faults: settings.faults))
        }
        let failed = reports.filter { !$0.passed }.count
        print(failed == 0 ? "PASS: 0 lost, 0 double grants, 0 stuck, 0 wrong outcomes, 0 anomalies" : "FAIL: \(failed) of \(reports.count) trials")
        if failed > 0 { throw ExitCode(1) }
    }
}

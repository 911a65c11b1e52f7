import ClusterHarness
import Foundation
import IAPClient
import PipelineCore

/// Everything one drill run needs; `workers/drill --help` documents each.
package struct DrillSettings: Sendable {
    package var trials = 10
    package var receiptsPerTrial = 2000
    /// Subscriptions apple-sim renews by itself during each trial (2-second periods).
    package var subscriptionsPerTrial = 12
    /// Players with two years of history at Apple from before the cutover (`IAP_ADOPTED_AT`),
    /// half of them imported, all synced under the faults (issue 54); 0: no cutover.
    package var adoptionPlayers = 4
    /// `iap-webhook` processes (as many as of every stage) deliver every event to a receiver in
    /// the drill, which refuses `webhookFailureRate` of the deliveries; 0 processes: no webhook.
    package var webhooks = true
    package var webhookFailureRate = 0.1
    /// Faults per second, on average, while receipts are being submitted.
    package var faultRate = 1.0
    package var seed: UInt64 = 1
    package var faults: [FaultKind] = FaultKind.all(for: .single)
    /// Each chosen fault is injected at least this often per trial (the trial goes on faulting
    /// after its receipts are in until it has been).
    package var faultsPerKind = 1
    package var topology = RedisTopology.single
    /// `IAP_BUCKETS` of the pipeline.
    package var buckets = 1
    /// `IAP_REDIS_MIN_REPLICAS` of the pipeline; by default 1 with replicas (sentinel, cluster:
    /// what a failover needs to lose nothing acknowledged), 0 without.
    package var minReplicas: Int?
    /// How long before each failover's kill the primary's replication links are cut.
    package var replicationGap: Duration = .zero
    /// The intake checks signatures (`IAP_CLIENT_KEYS_FILE`) and the client signs, as in production.
    package var signRequests = true
    /// The drill's game backend key (a new secret per run).
    let signer = RequestSigner(keyID: "drill", secret: (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 16) }.joined())
    package var durability = Durability.always
    /// Whether a Redis kill is a process crash or a power cut (unsynced AOF writes lost too).
    package var redisCrash = RedisCrash.process
    package var appleLatencyMs = 20
    /// Receipts submitted per second (spread out, so faults meet traffic).
    package var submitRate = 150
    package var clientConcurrency = 16
    package var processesPerStage = 2
    package var lease: Duration = .seconds(2)
    /// `IAP_APPLE_API_MAX_RPS` of the cluster: the fleet's App Store Server API budget.
    package var appleAPIMaxRPS = 200
    /// How long to wait, after the faults stop, for every ticket to be terminal.
    package var drainTimeoutSeconds = 120
    /// One long Apple outage per trial (verifyReceipt answers 503 throughout), a third into the
    /// submission; `.zero`: none. With `maxAttempts` low it outlasts every job's attempts many
    /// times over: the fleet's Apple breaker must keep all of them alive (0 dead letters).
    package var appleOutage: Duration = .zero
    /// `IAP_MAX_ATTEMPTS` of the workers.
    package var maxAttempts = 100
    /// Where the built executables are (`iap-intake`, `iap-verifier`, …, `apple-sim`).
    package var binDirectory: URL
    /// Data folders and logs, one per trial.
    package var workDirectory: URL

    /// apple-sim's retries of a notification it could not deliver: Apple's 1, 12, 24, 48 and 72
    /// hours at 25 ms an hour (each attempt's deadline is 2 s).
    package static let notificationRetryDelaysMs: [Int64] = [1, 12, 24, 48, 72].map { $0 * 25 }

    /// The cluster each trial starts: `processesPerStage` of every stage, short leases and retries.
    package var cluster: ClusterSettings {
        var cluster = ClusterSettings(binDirectory: binDirectory)
        cluster.durability = durability
        cluster.redisCrash = redisCrash
        cluster.topology = topology
        cluster.buckets = buckets
        cluster.replicationGap = replicationGap
        cluster.clientSigner = signRequests ? signer : nil
        cluster.minReplicas = minReplicas ?? (topology == .single ? 0 : 1)
        cluster.appleLatencyMs = appleLatencyMs
        cluster.processesPerStage = Dictionary(
            uniqueKeysWithValues: Stage.allCases.filter { webhooks || $0 != .webhook }.map { ($0, processesPerStage) })
        cluster.lease = lease
        cluster.appleAPIMaxRPS = appleAPIMaxRPS
        cluster.maxAttempts = maxAttempts
        // Re-checks at the end of each 2-second period, half a second after it, then two more.
        cluster.environment["IAP_RECHECK_BEFORE_S"] = "0"
        cluster.environment["IAP_RECHECK_AFTER_S"] = "0.5"
        cluster.environment["IAP_RECHECK_MAX"] = "2"
        // The sweep every 2 s: what Apple could not deliver comes in from its history.
        cluster.environment["IAP_NOTIFICATION_SWEEP_S"] = "2"
        // And Apple's refund history, every second: refunds Apple never notified are found there.
        cluster.environment["IAP_REFUND_SWEEP_S"] = "1"
        if adoptionPlayers > 0 { cluster.environment["IAP_ADOPTED_AT"] = PlannedAdoption.cutoverText }
        return cluster
    }

    package init(binDirectory: URL, workDirectory: URL) {
        self.binDirectory = binDirectory
        self.workDirectory = workDirectory
    }
}

import Foundation
import IAPClient
import PipelineCore

/// The shape of a local pipeline: how many processes of each stage, and how they are tuned.
public struct ClusterSettings: Sendable {
    /// Where the built executables are (`iap-intake`, `iap-verifier`, …, `apple-sim`).
    public var binDirectory: URL
    public var durability = Durability.always
    public var redisCrash = RedisCrash.process
    public var topology = RedisTopology.single
    /// `IAP_REDIS_MIN_REPLICAS` of every pipeline process (0: acknowledgements do not wait for replicas).
    public var minReplicas = 0
    /// `IAP_BUCKETS` of every pipeline process.
    public var buckets = 1
    /// For this long before a failover's kill the primary is cut off its replicas, as by a
    /// partition: what it takes meanwhile is on the primary alone when it dies.
    public var replicationGap: Duration = .zero
    public var appleLatencyMs = 20
    public var processesPerStage: [Stage: Int] = [.verify: 2, .dedupe: 2, .grant: 2, .notify: 1]
    /// `IAP_CONCURRENCY` of every worker process.
    public var workerConcurrency = 16
    public var lease: Duration = .seconds(2)
    /// Short retries and timeouts, so a drill trial drains in seconds.
    public var appleTimeout: Duration = .seconds(1)
    public var retryBase: Duration = .milliseconds(100)
    public var retryMax: Duration = .seconds(1)
    /// `IAP_MAX_ATTEMPTS`: many, so that only what must end dead does, unless a drill asks fewer.
    public var maxAttempts = 100
    public var redisPoolSize = 2
    /// `IAP_APPLE_API_MAX_RPS`: the fleet's App Store Server API budget per endpoint.
    public var appleAPIMaxRPS = 200
    public var logLevel = "info"
    /// More settings for every pipeline process (they win over the cluster's own), e.g.
    /// `IAP_LOG_FORMAT`, `IAP_APPLE_SHARED_SECRET`.
    public var environment: [String: String] = [:]
    /// The game backend's key: set, the intake checks signatures (`IAP_CLIENT_KEYS_FILE`) and the
    /// load client signs every attempt.
    public var clientSigner: RequestSigner?

    public init(binDirectory: URL) {
        self.binDirectory = binDirectory
    }

    public static let executables = ["iap-intake", "iap-verifier", "iap-deduper", "iap-granter", "iap-notifier", "apple-sim"]

    /// Fails unless every executable the cluster starts (and the power-cut library it needs) is built.
    public func checkExecutables() throws {
        let webhook = processesPerStage[.webhook, default: 0] > 0 ? ["iap-webhook"] : []
        for name in Self.executables + webhook + (redisCrash == .powerCut ? [RedisCrash.library] : []) {
            let path = binDirectory.appendingPathComponent(name).path
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw ClusterError("\(path) is missing: build the package first")
            }
        }
    }
}

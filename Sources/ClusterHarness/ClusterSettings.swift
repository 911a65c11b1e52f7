import Foundation
import IAPClient
import PipelineCore

/// The shape of a local pipeline: how many processes of each stage, and how they are tuned.
package struct ClusterSettings: Sendable {
    /// Where the built executables are (`iap-intake`, `iap-verifier`, …, `apple-sim`).
    package var binDirectory: URL
    package var durability = Durability.always
    package var redisCrash = RedisCrash.process
    package var topology = RedisTopology.single
    /// `IAP_REDIS_MIN_REPLICAS` of every pipeline process (0: acknowledgements do not wait for replicas).
    package var minReplicas = 0
    /// `IAP_BUCKETS` of every pipeline process.
    package var buckets = 1
    /// For this long before a failover's kill the primary is cut off its replicas, as by a
    /// partition: what it takes meanwhile is on the primary alone when it dies.
    package var replicationGap: Duration = .zero
    package var appleLatencyMs = 20
    package var processesPerStage: [Stage: Int] = [.verify: 2, .dedupe: 2, .grant: 2, .notify: 1]
    /// `IAP_CONCURRENCY` of every worker process.
    package var workerConcurrency = 16
    package var lease: Duration = .seconds(2)
    /// Short retries and timeouts, so a drill trial drains in seconds.
    package var appleTimeout: Duration = .seconds(1)
    package var retryBase: Duration = .milliseconds(100)
    package var retryMax: Duration = .seconds(1)
    /// `IAP_MAX_ATTEMPTS`: many, so that only what must end dead does, unless a drill asks fewer.
    package var maxAttempts = 100
    package var redisPoolSize = 2
    /// `IAP_APPLE_API_MAX_RPS`: the fleet's App Store Server API budget per endpoint.
    package var appleAPIMaxRPS = 200
    package var logLevel = "info"
    /// More settings for every pipeline process (they win over the cluster's own), e.g.
    /// `IAP_LOG_FORMAT`, `IAP_APPLE_SHARED_SECRET`.
    package var environment: [String: String] = [:]
    /// The game backend's key: set, the intake checks signatures (`IAP_CLIENT_KEYS_FILE`) and the
    /// load client signs every attempt.
    package var clientSigner: RequestSigner?
    /// A command to start some of the cluster's programs under, by name, with its arguments: the
    /// bench's `grant-cost` runs `redis-server` and `iap-granter` under valgrind's callgrind.
    package var launchPrefix: [String: [String]] = [:]

    package init(binDirectory: URL) {
        self.binDirectory = binDirectory
    }

    package static let executables = ["iap-intake", "iap-verifier", "iap-deduper", "iap-granter", "iap-notifier", "apple-sim"]

    /// Fails unless every executable the cluster starts (and the power-cut library it needs) is built.
    package func checkExecutables() throws {
        let webhook = processesPerStage[.webhook, default: 0] > 0 ? ["iap-webhook"] : []
        for name in Self.executables + webhook + (redisCrash == .powerCut ? [RedisCrash.library] : []) {
            let path = binDirectory.appendingPathComponent(name).path
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw ClusterError("\(path) is missing: build the package first")
            }
        }
    }
}

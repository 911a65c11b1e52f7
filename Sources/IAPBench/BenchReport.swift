/// One bench run: the cluster scenarios, and the jws and redis-client scenarios when they ran (`--json` prints this).
package struct BenchReport: Sendable, Codable {
    package var scenarios: [ScenarioResult]
    package var jws: JWSBenchResult?
    package var jobs: JobCodecBenchResult?
    package var redisClient: RedisClientBenchResult?
    /// The redis-client scenario on a cluster (`redis-client-cluster`).
    package var redisClientCluster: RedisClientBenchResult?
    package var wait: WaitBenchResult?
    package var rechecks: RecheckBenchResult?
    package var notifications: NotificationHistoryBenchResult?
    package var history: HistoryBenchResult?
    /// The `verify-cost`, `dedupe-cost` and `grant-cost` scenarios that ran, in that order.
    package var stageCosts: [StageCostBenchResult]?
    /// The `intake-cost` scenario: the intake's instructions a receipt beside a bare Hummingbird route's.
    package var intakeCost: IntakeCostBenchResult?
    /// The `retention` scenario: Apple's performance test against the real-time endpoint.
    package var retention: RetentionBenchResult?
    /// The `shards` scenario: one shard, then buckets over three.
    package var shards: [ShardBenchResult]?

    package init(scenarios: [ScenarioResult], jws: JWSBenchResult?, redisClient: RedisClientBenchResult? = nil) {
        self.scenarios = scenarios
        self.jws = jws
        self.redisClient = redisClient
    }
}

/// One bench run: the cluster scenarios, and the jws and redis-client scenarios when they ran (`--json` prints this).
public struct BenchReport: Sendable, Codable {
    public var scenarios: [ScenarioResult]
    public var jws: JWSBenchResult?
    public var redisClient: RedisClientBenchResult?
    /// The redis-client scenario on a cluster (`redis-client-cluster`).
    public var redisClientCluster: RedisClientBenchResult?
    public var wait: WaitBenchResult?
    public var rechecks: RecheckBenchResult?
    public var notifications: NotificationHistoryBenchResult?
    public var history: HistoryBenchResult?
    /// The `shards` scenario: one shard, then buckets over three.
    public var shards: [ShardBenchResult]?

    public init(scenarios: [ScenarioResult], jws: JWSBenchResult?, redisClient: RedisClientBenchResult? = nil) {
        self.scenarios = scenarios
        self.jws = jws
        self.redisClient = redisClient
    }
}

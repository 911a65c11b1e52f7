import ArgumentParser

/// Where Redis is and how a process talks to it: every command.
public struct RedisOptions: SettingsGroup {
    @Option(help: "IAP_REDIS_URL: redis://[:password@]host[:port][/db] or unix:///path.sock") var redisUrl: String?
    @Option(help: "IAP_PREFIX: key prefix (default iap)") var prefix: String?
    @Option(help: "IAP_REDIS_POOL_SIZE (default 2)") var redisPoolSize: String?

    public init() {}

    public var flags: [String: String?] {
        ["IAP_REDIS_URL": redisUrl, "IAP_PREFIX": prefix, "IAP_REDIS_POOL_SIZE": redisPoolSize]
    }
}

/// How many replicas must have a write before it is acknowledged: the intake and the stages.
public struct ReplicationOptions: SettingsGroup {
    @Option(help: "IAP_REDIS_MIN_REPLICAS: replicas that must confirm a write before it is acknowledged (default 0)")
    var redisMinReplicas: String?
    @Option(help: "IAP_REDIS_REPLICA_TIMEOUT_MS: how long to wait for them (default 1000)") var redisReplicaTimeoutMs: String?

    public init() {}

    public var flags: [String: String?] {
        ["IAP_REDIS_MIN_REPLICAS": redisMinReplicas, "IAP_REDIS_REPLICA_TIMEOUT_MS": redisReplicaTimeoutMs]
    }
}

/// How long tickets live: the intake, and iapctl's replay.
public struct TicketOptions: SettingsGroup {
    @Option(help: "IAP_TICKET_TTL_S (default 604800)") var ticketTtlS: String?

    public init() {}

    public var flags: [String: String?] { ["IAP_TICKET_TTL_S": ticketTtlS] }
}

/// How long a silent worker keeps its jobs: the stages, and iapctl's view of live workers.
public struct LeaseOptions: SettingsGroup {
    @Option(help: "IAP_LEASE_MS (default 30000)") var leaseMs: String?

    public init() {}

    public var flags: [String: String?] { ["IAP_LEASE_MS": leaseMs] }
}

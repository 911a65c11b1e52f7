import ArgumentParser
import IAPSettings

/// Where Redis is and how a process talks to it: every command.
package struct RedisOptions: SettingsGroup {
    @Option(setting: Settings.redisURL) var redisUrl: String?
    @Option(setting: Settings.prefix) var prefix: String?
    @Option(setting: Settings.buckets) var buckets: String?
    @Option(setting: Settings.redisPoolSize) var redisPoolSize: String?
    @Option(setting: Settings.redisTLSCAFile) var redisTlsCaFile: String?
    @Option(setting: Settings.redisTLSCertFile) var redisTlsCertFile: String?
    @Option(setting: Settings.redisTLSKeyFile) var redisTlsKeyFile: String?
    @Option(setting: Settings.redisSentinelPassword) var redisSentinelPassword: String?

    package init() {}
}

/// How many replicas must have a write before it is acknowledged: the intake, the deduper and the granter.
package struct ReplicationOptions: SettingsGroup {
    @Option(setting: Settings.redisMinReplicas) var redisMinReplicas: String?
    @Option(setting: Settings.redisReplicaTimeout) var redisReplicaTimeoutMs: String?

    package init() {}
}

/// How long tickets live: the intake, the verifier (re-checks' tickets) and iapctl's replay.
package struct TicketOptions: SettingsGroup {
    @Option(setting: Settings.ticketTTL) var ticketTtlS: String?

    package init() {}
}

/// How long a silent worker keeps its jobs: the stages, and iapctl's view of live workers.
package struct LeaseOptions: SettingsGroup {
    @Option(setting: Settings.lease) var leaseMs: String?

    package init() {}
}

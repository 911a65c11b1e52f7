import ArgumentParser
import IAPSettings

/// Where Redis is and how a process talks to it: every command.
public struct RedisOptions: SettingsGroup {
    @Option(name: Settings.redisURL.name, help: Settings.redisURL.argumentHelp) var redisUrl: String?
    @Option(name: Settings.prefix.name, help: Settings.prefix.argumentHelp) var prefix: String?
    @Option(name: Settings.buckets.name, help: Settings.buckets.argumentHelp) var buckets: String?
    @Option(name: Settings.redisPoolSize.name, help: Settings.redisPoolSize.argumentHelp) var redisPoolSize: String?
    @Option(name: Settings.redisTLSCAFile.name, help: Settings.redisTLSCAFile.argumentHelp) var redisTlsCaFile: String?
    @Option(name: Settings.redisTLSCertFile.name, help: Settings.redisTLSCertFile.argumentHelp) var redisTlsCertFile: String?
    @Option(name: Settings.redisTLSKeyFile.name, help: Settings.redisTLSKeyFile.argumentHelp) var redisTlsKeyFile: String?
    @Option(name: Settings.redisSentinelPassword.name, help: Settings.redisSentinelPassword.argumentHelp) var redisSentinelPassword: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.redisURL: redisUrl,
            Settings.prefix: prefix,
            Settings.buckets: buckets,
            Settings.redisPoolSize: redisPoolSize,
            Settings.redisTLSCAFile: redisTlsCaFile,
            Settings.redisTLSCertFile: redisTlsCertFile,
            Settings.redisTLSKeyFile: redisTlsKeyFile,
            Settings.redisSentinelPassword: redisSentinelPassword,
        ]
    }
}

/// How many replicas must have a write before it is acknowledged: the intake, the deduper and the granter.
public struct ReplicationOptions: SettingsGroup {
    @Option(name: Settings.redisMinReplicas.name, help: Settings.redisMinReplicas.argumentHelp) var redisMinReplicas: String?
    @Option(name: Settings.redisReplicaTimeout.name, help: Settings.redisReplicaTimeout.argumentHelp) var redisReplicaTimeout: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.redisMinReplicas: redisMinReplicas,
            Settings.redisReplicaTimeout: redisReplicaTimeout,
        ]
    }
}

/// How long tickets live: the intake, the verifier (re-checks' tickets) and iapctl's replay.
public struct TicketOptions: SettingsGroup {
    @Option(name: Settings.ticketTTL.name, help: Settings.ticketTTL.argumentHelp) var ticketTTL: String?

    public init() {}

    public var flags: [Setting: String?] { [Settings.ticketTTL: ticketTTL] }
}

/// How long a silent worker keeps its jobs: the stages, and iapctl's view of live workers.
public struct LeaseOptions: SettingsGroup {
    @Option(name: Settings.lease.name, help: Settings.lease.argumentHelp) var lease: String?

    public init() {}

    public var flags: [Setting: String?] { [Settings.lease: lease] }
}

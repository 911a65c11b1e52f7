import IAPSettings
import RedisClient

/// Where the pipeline's state lives and how its keys are laid out, each setting checked when read:
/// `IAP_REDIS_URL` with its TLS files and the sentinels' password, `IAP_PREFIX` and `IAP_BUCKETS`,
/// the pool (`IAP_REDIS_POOL_SIZE`) and the replicas an acknowledged write waits for
/// (`IAP_REDIS_MIN_REPLICAS`, `IAP_REDIS_REPLICA_TIMEOUT_MS`).
package struct RedisSettings: Sendable {
    /// `IAP_BUCKETS` on `redis-cluster://` with a plain prefix when it is not given: 64 buckets
    /// spread evenly over up to 32 primaries (two or more buckets each); a fleet planned past
    /// that sets more before its first purchase (the number is fixed once data exists). Each
    /// bucket costs every stage process one blocking connection.
    package static let clusterBuckets = 64

    /// `IAP_REDIS_URL` as given (its password is masked wherever settings are shown).
    package var url: String
    /// The URL parsed, with TLS and the sentinels' password.
    package var connection: RedisConfiguration
    package var prefix: String
    /// The layout of the keyspace, built once (finding a tag per bucket takes a while).
    package let layout: BucketLayout
    /// Connections each process shares (`IAP_REDIS_POOL_SIZE`).
    package var poolSize: Int
    /// Replicas that must confirm an acknowledged write (`WAIT`); 0: none.
    package var minReplicas: Int
    package var replicaTimeout: Duration

    package init(reading source: SettingSource) throws(ConfigurationError) {
        url = source.text(Settings.redisURL)!
        do {
            connection = try RedisConfiguration(url: url)
        } catch {
            throw ConfigurationError(Settings.redisURL.variable, "\(error)")
        }
        try Self.readSecurity(source, into: &connection)
        prefix = source.text(Settings.prefix)!
        layout = try Self.readLayout(source, prefix: prefix, endpoint: connection.endpoint)
        poolSize = try source.count(Settings.redisPoolSize)
        minReplicas = try source.count(Settings.redisMinReplicas)
        replicaTimeout = try source.duration(Settings.redisReplicaTimeout)
    }

    /// The key map of this prefix and layout.
    package var keys: RedisKeys { RedisKeys(prefix: prefix, layout: layout) }

    /// What acknowledged writes wait for; `nil` when `IAP_REDIS_MIN_REPLICAS` is 0.
    package var replication: RedisReplication? {
        minReplicas > 0 ? RedisReplication(replicas: minReplicas, timeout: replicaTimeout) : nil
    }

    /// A client of `poolSize` connections, or of `connections` where a tool needs fewer.
    package func client(connections: Int? = nil) -> RedisClient {
        RedisClient(configuration: connection, poolSize: connections ?? poolSize)
    }

    /// `IAP_BUCKETS` and the prefix together. On a cluster the prefix says the layout: one hash tag
    /// (`{iap}`) keeps every key in its one slot (one bucket, as before buckets); a plain prefix
    /// spreads the keys over buckets, `clusterBuckets` unless IAP_BUCKETS says otherwise.
    static func readLayout(_ source: SettingSource, prefix: String, endpoint: RedisConfiguration.Endpoint) throws(ConfigurationError) -> BucketLayout {
        guard !prefix.contains(where: { $0 == " " || $0.isNewline }) else {
            throw ConfigurationError(Settings.prefix.variable, "must not contain spaces")
        }
        guard case .cluster = endpoint else { return BucketLayout(count: try source.count(Settings.buckets)) }
        let tagged = RedisClusterSlot.hashed(prefix) != nil
        let buckets = source.given(Settings.buckets) == nil ? (tagged ? 1 : Self.clusterBuckets) : try source.count(Settings.buckets)
        if buckets == 1, !tagged {
            throw ConfigurationError(
                Settings.prefix.variable,
                "with IAP_BUCKETS=1 on redis-cluster:// the prefix must be a hash tag, like {iap}, so that every key shares one slot")
        }
        if buckets > 1, tagged {
            throw ConfigurationError(
                Settings.prefix.variable,
                "with IAP_BUCKETS above 1 on redis-cluster:// the prefix must not be a hash tag: it would put every bucket in one slot")
        }
        return BucketLayout(count: buckets)
    }

    /// TLS to Redis (its files, with a `rediss…` URL only) and the sentinels' password. A file
    /// that does not load stops the process at start, naming its setting.
    static func readSecurity(_ source: SettingSource, into redis: inout RedisConfiguration) throws(ConfigurationError) {
        let ca = source.given(Settings.redisTLSCAFile)
        let certificate = source.given(Settings.redisTLSCertFile)
        let key = source.given(Settings.redisTLSKeyFile)
        redis.sentinelPassword = source.given(Settings.redisSentinelPassword)
        guard redis.tls != nil else {
            if let given = [(Settings.redisTLSCAFile, ca), (Settings.redisTLSCertFile, certificate), (Settings.redisTLSKeyFile, key)]
                .first(where: { $0.1 != nil })
            {
                throw ConfigurationError(
                    given.0.variable, "is set, but IAP_REDIS_URL is not rediss://, rediss-sentinel:// or rediss-cluster://")
            }
            return
        }
        guard (certificate == nil) == (key == nil) else {
            throw ConfigurationError(Settings.redisTLSCertFile.variable, "needs IAP_REDIS_TLS_KEY_FILE, and the key the certificate")
        }
        let tls = RedisConfiguration.TLS(caFile: ca, certificateFile: certificate, keyFile: key)
        if let problem = RedisConnection.problem(with: tls) {
            throw ConfigurationError(ca == nil ? Settings.redisTLSCertFile.variable : Settings.redisTLSCAFile.variable, problem)
        }
        redis.tls = tls
    }
}

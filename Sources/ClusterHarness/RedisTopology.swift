/// How a local cluster runs Redis.
public enum RedisTopology: String, CaseIterable, Sendable, Codable {
    /// One redis-server; the pipeline dials it with a `redis://` URL.
    case single
    /// One primary, two replicas and three sentinels (quorum 2); the pipeline dials the sentinels
    /// with a `redis-sentinel://` URL and follows a failover by itself.
    case sentinel

    /// The name the sentinels monitor the primary under.
    public static let master = "drill"
    /// Replicas of the primary in the `sentinel` topology.
    static let replicas = 2
    static let sentinels = 3
    /// Sentinels that must agree the primary is down before one of them fails it over.
    static let quorum = 2
    /// How long a sentinel waits for a reply before it holds a node down. A sentinel pings every
    /// second; at 1000 ms it can hold a primary it has just switched to down before its first
    /// ping is answered, and fail over again.
    static let downAfterMs = 2000

    /// Redis processes in this topology: the first starts as the primary.
    var nodes: Int { self == .single ? 1 : 1 + Self.replicas }
    var sentinelCount: Int { self == .single ? 0 : Self.sentinels }
}

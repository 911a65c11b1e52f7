/// How a local cluster runs Redis.
package enum RedisTopology: String, CaseIterable, Sendable, Codable {
    /// One redis-server; the pipeline dials it with a `redis://` URL.
    case single
    /// One primary, two replicas and three sentinels (quorum 2); the pipeline dials the sentinels
    /// with a `redis-sentinel://` URL and follows a failover by itself.
    case sentinel
    /// A Redis Cluster of three primaries with a replica each; the pipeline dials every node as a
    /// seed (`redis-cluster://`) and runs on the one slot of its prefix, `{iap}`.
    case cluster

    /// The name the sentinels monitor the primary under.
    package static let master = "drill"
    /// Replicas of the primary in the `sentinel` topology.
    static let replicas = 2
    static let sentinels = 3
    /// Sentinels that must agree the primary is down before one of them fails it over.
    static let quorum = 2
    /// How long a sentinel waits for a reply before it holds a node down. A sentinel pings every
    /// second; at 1000 ms it can hold a primary it has just switched to down before its first
    /// ping is answered, and fail over again.
    static let downAfterMs = 2000
    /// Primaries of the `cluster` topology, and replicas of each.
    static let clusterPrimaries = 3
    static let clusterReplicasEach = 1
    /// `cluster-node-timeout`: how long a silent primary has before its replica takes over (as
    /// the sentinels' `down-after-milliseconds`).
    static let clusterNodeTimeout: Duration = .seconds(2)

    /// Redis processes in this topology: with sentinels, the first starts as the primary.
    var nodes: Int {
        switch self {
        case .single: 1
        case .sentinel: 1 + Self.replicas
        case .cluster: Self.clusterPrimaries * (1 + Self.clusterReplicasEach)
        }
    }
    var sentinelCount: Int { self == .sentinel ? Self.sentinels : 0 }

    /// The pipeline's `IAP_PREFIX`: on a cluster, one hash tag, so every key is in one slot.
    package var prefix: String { self == .cluster ? "{iap}" : "iap" }
}

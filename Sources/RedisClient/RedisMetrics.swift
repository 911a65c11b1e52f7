import Metrics

/// The Redis client's connections: `iap_redis_reconnects_total` (a connection dialled again after
/// it was lost: a Redis restart, a failover, a network cut) and `iap_redis_dial_failures_total`
/// (dials that failed; the client retries them with backoff); on a cluster,
/// `iap_redis_cluster_redirects_total{reply}` (`MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`: the
/// client followed or waited out a slot's move or a failover).
enum RedisMetrics {
    static func connected(again: Bool) {
        if again { Counter(label: "iap_redis_reconnects_total").increment() }
    }

    static func dialFailed() {
        Counter(label: "iap_redis_dial_failures_total").increment()
    }

    static func redirected(_ reply: Substring) {
        Counter(label: "iap_redis_cluster_redirects_total", dimensions: [("reply", String(reply))]).increment()
    }
}

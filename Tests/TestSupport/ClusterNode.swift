import RedisClient

/// Runs `body` with a one-node Redis Cluster (every slot on one `redis-server
/// --cluster-enabled yes`): a script with a `#!lua` header that touches a key in another slot
/// than its declared keys is refused there ("… do not hash to the same slot"), so with every
/// declared key under one hash tag, a key a script builds for itself fails.
public func withClusterNode<T>(_ body: (RedisClient, RedisServer) async throws -> T) async throws -> T {
    try await withRedis(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]) { redis, server in
        try await redis.send("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        try await until("the one-node cluster is ok") {
            (try await redis.send("CLUSTER", "INFO").string ?? "").contains("cluster_state:ok")
        }
        return try await body(redis, server)
    }
}

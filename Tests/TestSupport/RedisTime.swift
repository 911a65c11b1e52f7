import RedisClient

/// Redis's own clock (`TIME`) in milliseconds: what the scripts read as now.
public func redisTimeMs(_ redis: RedisClient) async throws -> Int64 {
    let parts = try await redis.send("TIME").array?.compactMap { $0.string.flatMap { Int64($0) } } ?? []
    guard parts.count == 2 else { throw TestSupportError("TIME answered \(parts)") }
    return parts[0] * 1000 + parts[1] / 1000
}

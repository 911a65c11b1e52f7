import IAPPipeline
import RedisClient

/// The fulfilment stream's entries, oldest first, as their fields: what the script suites assert on.
public func fulfilmentEvents(_ redis: RedisClient, _ keys: RedisKeys) async throws -> [[String: String]] {
    (try await redis.send("XRANGE", keys.fulfilment, "-", "+").array ?? []).map { $0.array?.last?.stringDictionary ?? [:] }
}

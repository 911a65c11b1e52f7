import PipelineCore
import RedisClient

/// The fulfilment stream's entries, oldest first, as their fields: what the script suites assert
/// on. The ledger's only, unless `notifications`: `accept_notification` adds one `notification`
/// entry for each notification it stores.
package func fulfilmentEvents(_ redis: RedisClient, _ keys: RedisKeys, notifications: Bool = false) async throws -> [[String: String]] {
    (try await redis.send("XRANGE", keys.fulfilment, "-", "+").array ?? []).map { $0.array?.last?.stringDictionary ?? [:] }
        .filter { notifications || $0["event"] != "notification" }
}

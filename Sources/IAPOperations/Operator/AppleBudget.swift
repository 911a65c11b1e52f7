import AppStoreServerAPI
import PipelineCore
import RedisClient

/// The fleet's App Store Server API budget as it stands: per environment and endpoint (per app
/// with `IAP_APPS_FILE`), the calls of the last second and any hold Apple's 429 set. What an
/// on-call engineer asks when verify jobs wait for Apple.
package struct AppleBudgetUse: Sendable, Equatable {
    package var environment: String
    /// The endpoint as the budget names it: `transaction_info`, or `transaction_info:<bundle id>`.
    package var endpoint: String
    package var callsLastSecond: Int
    /// No process calls it before this (UNIX ms); `nil`: no hold.
    package var heldUntil: Int64?
}

extension PipelineStore {
    /// The endpoints in use or held, in one round trip (two keys per environment, endpoint and app).
    package func appleBudget(apps: [String?] = [nil], now: Int64 = currentTimeMs()) async throws -> [AppleBudgetUse] {
        let names = ServerAPIEndpoint.allCases.flatMap { endpoint in apps.map { app in app.map { "\(endpoint.rawValue):\($0)" } ?? endpoint.rawValue } }
        let pairs = ["production", "sandbox"].flatMap { environment in names.map { (environment, $0) } }
        let replies = try await redis.pipeline(pairs.flatMap { environment, endpoint in
            [
                RedisCommand("ZCOUNT", keys.apiPermits(environment: environment, endpoint: endpoint), String(now - 1000), "+inf"),
                RedisCommand("GET", keys.apiHold(environment: environment, endpoint: endpoint)),
            ]
        })
        for reply in replies { try reply.checked() }
        return pairs.enumerated().compactMap { index, pair in
            let calls = Int(replies[2 * index].int ?? 0)
            let hold = replies[2 * index + 1].string.flatMap { Int64($0) }.flatMap { $0 > now ? $0 : nil }
            guard calls > 0 || hold != nil else { return nil }
            return AppleBudgetUse(environment: pair.0, endpoint: pair.1, callsLastSecond: calls, heldUntil: hold)
        }
    }
}

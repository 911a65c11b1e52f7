import AppStoreServerAPI
import Foundation
import PipelineCore
import RedisClient

/// The App Store Server API budget shared by every verifier through Redis: `take_api_permit`
/// and `hold_api_endpoint`. Production gets `maxPerSecond`, sandbox a tenth (Apple's limits).
/// Apple counts per app: with several apps (`IAP_APPS_FILE`) each app has its own budget and
/// its own holds (`app`, the bundle id, joins the endpoint's name in their keys).
package struct RedisAPIRateLimiter: ServerAPIRateLimiting {
    package let store: PipelineStore
    package let maxPerSecond: Int
    /// The app whose budget this is; `nil`: the one app's (keys without a bundle id).
    package let app: String?
    /// Slightly longer than a second, so that network jitter between the permit and Apple's
    /// arrival cannot squeeze `limit + 1` calls into one of Apple's seconds.
    package static let window: Duration = .milliseconds(1100)

    package init(store: PipelineStore, maxPerSecond: Int, app: String? = nil) {
        self.store = store
        self.maxPerSecond = maxPerSecond
        self.app = app
    }

    /// The endpoint as the budget's keys name it: `transaction_info`, or per app `transaction_info:<bundle id>`.
    func budgetName(_ endpoint: ServerAPIEndpoint) -> String {
        app.map { "\(endpoint.rawValue):\($0)" } ?? endpoint.rawValue
    }

    package func limit(_ environment: ServerAPIEnvironment) -> Int {
        environment == .production ? maxPerSecond : max(maxPerSecond / 10, 1)
    }

    package func permit(endpoint: ServerAPIEndpoint, environment: ServerAPIEnvironment) async throws -> Duration? {
        let waitMs = try await store.takeAPIPermit(
            environment: environment.rawValue.lowercased(), endpoint: budgetName(endpoint), limit: limit(environment),
            window: Self.window)
        return waitMs > 0 ? .milliseconds(waitMs) : nil
    }

    package func hold(endpoint: ServerAPIEndpoint, environment: ServerAPIEnvironment, untilMs: Int64) async throws {
        try await store.holdAPIEndpoint(environment: environment.rawValue.lowercased(), endpoint: budgetName(endpoint), untilMs: untilMs)
    }
}

extension PipelineStore {
    /// Takes one call from the fleet's budget; returns 0 when granted, else the ms to wait.
    package func takeAPIPermit(environment: String, endpoint: String, limit: Int, window: Duration) async throws -> Int64 {
        try await run(TakeAPIPermit(keys, environment: environment, endpoint: endpoint, limit: limit, window: window))
    }

    /// Holds an endpoint fleet-wide until `untilMs` (UNIX ms); returns the hold in force.
    @discardableResult
    package func holdAPIEndpoint(environment: String, endpoint: String, untilMs: Int64) async throws -> Int64 {
        try await run(HoldAPIEndpoint(keys, environment: environment, endpoint: endpoint, untilMs: untilMs))
    }
}

extension ServerAPITransactionLookup: TransactionLookup {}
extension ServerAPISubscriptionCheck: SubscriptionChecking {}

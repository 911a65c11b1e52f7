/// One of Apple's services a verify job asks, each with its own breaker: an outage of
/// verifyReceipt leaves the App Store Server API answering, and the reverse.
package enum AppleService: String, Sendable, CaseIterable {
    case verifyReceipt = "verify-receipt"
    case serverAPI = "server-api"

    /// The service whose failure a transient reason is, when it is Apple's own (its answer or its
    /// silence): not our Redis, not the fleet's own budget of Server API calls, not a stop.
    package init?(failure reason: String) {
        guard reason.hasPrefix("apple_"), reason != "apple_api_rate_limited", reason != "apple_breaker_open" else { return nil }
        self = reason.hasPrefix("apple_api_") ? .serverAPI : .verifyReceipt
    }
}

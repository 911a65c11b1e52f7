/// The fleet-wide budget of calls to one App Store Server API endpoint (shared through Redis by
/// every verifier process).
public protocol ServerAPIRateLimiting: Sendable {
    /// Takes one call from the budget: `nil` when granted, else how long to wait before asking again.
    func permit(endpoint: ServerAPIEndpoint, environment: ServerAPIEnvironment) async throws -> Duration?
    /// No process calls `endpoint` before `untilMs` (UNIX ms): Apple answered 429 with this Retry-After.
    func hold(endpoint: ServerAPIEndpoint, environment: ServerAPIEnvironment, untilMs: Int64) async throws
}

/// The endpoints we call; Apple limits each one on its own.
public enum ServerAPIEndpoint: String, Sendable, CaseIterable {
    case transactionInfo = "transaction_info"
    case transactionHistory = "transaction_history"
    case subscriptionStatuses = "subscription_statuses"
    case consumption
    case testNotification = "test_notification"
    case testNotificationStatus = "test_notification_status"
    case notificationHistory = "notification_history"
    case orderLookup = "order_lookup"
    case appAccountToken = "app_account_token"
    case finishTransaction = "finish_transaction"
    case appTransactionInfo = "app_transaction_info"
    case refundHistory = "refund_history"
    case extendRenewalDate = "extend_renewal_date"
    case massExtendRenewalDate = "mass_extend_renewal_date"
    case massExtendStatus = "mass_extend_status"
    /// The Retention Messaging API's setup calls (real-time URL, messages, images, default
    /// messages, the performance test): an operator's, rare.
    case retentionMessaging = "retention_messaging"
}

import AppleReceipt

/// Every reason a ticket, a purchase or a dead letter can carry: the codes docs/http-api.md and
/// docs/apple-answers.md publish, in one place as the keys are in `RedisKeys`. Those Apple's
/// clients give are theirs (`AppleReason`), named here too. The Lua scripts spell a
/// few of them too: `refunded` (grant_purchases), `no_purchases` (grant_purchases),
/// `undecodable_job` (promote_due_retries, reap_expired_workers), `poison_redelivered` and
/// `unknown_stage` (reap_expired_workers).
package enum ReasonCode {
    // A rejected ticket or purchase: the user's evidence does not earn a grant.
    package static let bundleMismatch = "bundle_mismatch"
    package static let noPurchases = "no_purchases"
    package static let productMismatch = "product_mismatch"
    package static let transactionNotInReceipt = "transaction_not_in_receipt"
    package static let refunded = "refunded"
    package static let invalidSignature = AppleReason.invalidSignature
    package static let transactionNotFound = AppleReason.transactionNotFound
    package static let noGrantUnit = "no_grant_unit"
    /// `IAP_SANDBOX` does not let this user's sandbox purchases through.
    package static let sandboxNotAllowed = "sandbox_not_allowed"
    /// The purchase's Apple-signed `appAccountToken` is bound to another user (`PUT
    /// /v1/users/{id}/app-account-token`, or an earlier purchase): not granted to the submitter,
    /// and not claimed, so the token's user can still be granted it.
    package static let appAccountTokenMismatch = "app_account_token_mismatch"

    // A held purchase: the dedupe stage's policy keeps it from its grant until an operator decides.
    // The grant script spells `daily_limit_exceeded` and `refund_limit_exceeded`.
    package static let currencyNotAllowed = "currency_not_allowed"
    package static let currencyUnknown = "currency_unknown"
    package static let dailyLimitExceeded = "daily_limit_exceeded"
    package static let refundLimitExceeded = "refund_limit_exceeded"
    /// The purchase was made on an Apple Account with `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT` other users already.
    package static let appleAccountShared = "apple_account_shared"
    /// Made before its app's cutover (`IAP_ADOPTED_AT`), unknown to the books, and `IAP_PRE_ADOPTION=hold`.
    package static let preAdoption = "pre_adoption"
    /// A signed app transaction without `appTransactionId` (made before iOS 18.4): no Apple Account to bind.
    package static let noAppTransactionID = "no_app_transaction_id"
    /// Apple rejected a receipt with this `status`.
    package static func appleStatus(_ status: Int) -> String { AppleReason.appleStatus(status) }
    /// The Server API refused the request's content with this `errorCode`.
    package static func appleAPIError(_ errorCode: Int) -> String { AppleReason.appleAPIError(errorCode) }

    /// A retry's reason (never an end): the job did not ask Apple, whose service the fleet's
    /// breaker holds open; it waits for a later turn, spending no attempt.
    package static let appleBreakerOpen = "apple_breaker_open"

    // A dead letter: our configuration or our data, never the user's fault; fix, then replay.
    package static let retriesExhausted = "retries_exhausted"
    package static let unknownProduct = "unknown_product"
    package static let ticketMissing = "ticket_missing"
    package static let undecodableJob = "undecodable_job"
    /// A job in one bucket's lists whose ticket lies in another (none of this pipeline's).
    package static let foreignTicket = "foreign_ticket"
    package static let missingVerifiedReceipt = "missing_verified_receipt"
    package static let serverAPINotConfigured = "server_api_not_configured"
    /// A subscription's re-check came due on a verifier without App Store Server API keys: nobody
    /// to ask (the schedule tries again, then gives up; notifications still move the subscription).
    package static let recheckUnavailable = "recheck_unavailable"
    package static let appleAPIUnauthorized = AppleReason.appleAPIUnauthorized
    package static let appleAPIMisconfigured = AppleReason.appleAPIMisconfigured
    package static let unreadableDeadLetter = "unreadable_dead_letter"
    /// A 4xx from a verifyReceipt URL (or a 429/5xx, as a retry reason).
    package static func appleHTTP(_ code: Int) -> String { AppleReason.appleHTTP(code) }
}

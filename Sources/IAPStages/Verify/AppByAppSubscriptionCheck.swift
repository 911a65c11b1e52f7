import AppleReceipt
import PipelineCore

/// A re-check (Get All Subscription Statuses) for several apps: the subscription's app is not
/// recorded, so each app's key is tried in turn while Apple does not know it.
package struct AppByAppSubscriptionCheck: SubscriptionChecking {
    package let apps: [(bundleID: String, check: any SubscriptionChecking)]

    package func check(
        originalTransactionID: String, environment: String, knownLatest: String?, knownExpiresAt: Int64?, knownRevision: String?,
        attempt: Int
    ) async -> VerificationOutcome {
        var last: VerificationOutcome = .rejected(reason: ReasonCode.transactionNotFound, detail: "no app has a Server API key")
        for app in apps {
            let outcome = await app.check.check(
                originalTransactionID: originalTransactionID, environment: environment, knownLatest: knownLatest,
                knownExpiresAt: knownExpiresAt, knownRevision: knownRevision, attempt: attempt)
            if case .rejected(let reason, _) = outcome, reason == ReasonCode.transactionNotFound {
                last = outcome
                continue
            }
            return outcome
        }
        return last
    }
}

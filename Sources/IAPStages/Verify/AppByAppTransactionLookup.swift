import AppleReceipt
import PipelineCore

/// Get Transaction Info for several apps (`IAP_APPS_FILE`), each with its own Server API key
/// (its tokens carry the app's `bid`, and Apple answers for that app's transactions only). A
/// transaction id whose client named its app is looked up with that app's key alone; a bare one
/// with each app's in turn (bundle-id order) while Apple knows it in neither environment: up to
/// two calls per app tried. What Apple answers must be of the app whose key asked.
package struct AppByAppTransactionLookup: TransactionLookup {
    package let apps: [(bundleID: String, lookup: any TransactionLookup)]
    /// The app the client named (`bundle_id`): only its key asks; `nil`: each in turn.
    package let named: String?

    package init(apps: [(bundleID: String, lookup: any TransactionLookup)], named: String? = nil) {
        self.apps = apps
        self.named = named
    }

    /// The same apps, for a job whose client named `bundleID` (or none).
    package func named(_ bundleID: String?) -> AppByAppTransactionLookup {
        AppByAppTransactionLookup(apps: apps, named: bundleID)
    }

    package func lookUp(transactionID: String, attempt: Int) async -> VerificationOutcome {
        let bundleID = named
        let candidates = bundleID.map { named in apps.filter { $0.bundleID == named } } ?? apps
        if candidates.isEmpty, let bundleID, !apps.isEmpty {
            // Our gap, not the player's: dead-lettered, replayable once the app has its key.
            return .misconfigured(
                reason: ReasonCode.serverAPINotConfigured, detail: "\(bundleID.prefix(128)) has no Server API key in IAP_APPS_FILE")
        }
        var last: VerificationOutcome = .rejected(
            reason: ReasonCode.transactionNotFound, detail: "no app of IAP_APPS_FILE has a Server API key for \(bundleID ?? "it")")
        for app in candidates {
            let outcome = await app.lookup.lookUp(transactionID: transactionID, attempt: attempt)
            switch outcome {
            case .rejected(let reason, _) where reason == ReasonCode.transactionNotFound:
                last = outcome
                continue
            case .valid(let receipt) where receipt.bundleID != app.bundleID:
                return .rejected(
                    reason: ReasonCode.bundleMismatch,
                    detail: "asked with \(app.bundleID)'s key, Apple answered a transaction of \(receipt.bundleID.prefix(128))")
            default:
                return outcome
            }
        }
        return last
    }
}

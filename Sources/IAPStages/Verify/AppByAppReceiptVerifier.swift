import AppleReceipt
import PipelineCore

/// verifyReceipt for several apps (`IAP_APPS_FILE`), each with its own shared secret. A receipt
/// whose client named its app is asked with that app's secret alone; an opaque one is asked with
/// each distinct secret in turn (bundle-id order) until Apple does not refuse it (21004): one call
/// when the receipt holds no auto-renewable subscription (Apple then checks no secret) or its app
/// comes first, at most one per distinct secret otherwise. An answer naming another app than the
/// one whose secret asked is asked again with that app's secret, so what Apple answers always
/// matches the secret that asked.
package struct AppByAppReceiptVerifier: ReceiptVerifying {
    package let verifier: AppleVerifier
    /// Each app's secret, in the order apps are tried.
    package let apps: [(bundleID: String, sharedSecret: String?)]
    /// The app the client named (`bundle_id`): only its secret asks; `nil`: each in turn.
    package let named: String?

    package init(verifier: AppleVerifier, apps: [(bundleID: String, sharedSecret: String?)], named: String? = nil) {
        self.verifier = verifier
        self.apps = apps
        self.named = named
    }

    /// The same apps, for a job whose client named `bundleID` (or none).
    package func named(_ bundleID: String?) -> AppByAppReceiptVerifier {
        AppByAppReceiptVerifier(verifier: verifier, apps: apps, named: bundleID)
    }

    static let secretRefused = AppleStatus.reason(21004)

    package func verify(receiptData: String, attempt: Int) async -> VerificationOutcome {
        let candidates = named.map { named in apps.filter { $0.bundleID == named } } ?? apps
        // A job queued for an app the apps file no longer lists: not ours to ask for.
        if candidates.isEmpty, let bundleID = named {
            return .rejected(reason: ReasonCode.bundleMismatch, detail: "\(bundleID.prefix(128)) is not an app of IAP_APPS_FILE")
        }
        var tried: [String?] = []
        for app in candidates where !tried.contains(app.sharedSecret) {
            tried.append(app.sharedSecret)
            let outcome = await verifier.verify(receiptData: receiptData, attempt: attempt, sharedSecret: app.sharedSecret)
            if case .misconfigured(let reason, _) = outcome, reason == Self.secretRefused { continue }
            guard case .valid(let receipt) = outcome, receipt.bundleID != app.bundleID,
                  let owner = apps.first(where: { $0.bundleID == receipt.bundleID }), owner.sharedSecret != app.sharedSecret
            else { return outcome }
            return await verifier.verify(receiptData: receiptData, attempt: attempt, sharedSecret: owner.sharedSecret)
        }
        return .misconfigured(
            reason: Self.secretRefused,
            detail: "Apple says the shared secret is wrong (21004) for every app tried ("
                + candidates.map(\.bundleID).joined(separator: ", ") + "): check shared_secret in IAP_APPS_FILE")
    }
}

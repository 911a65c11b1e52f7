import AppleReceipt

/// The seam to the App Store Server API: looks a transaction id up and verifies what Apple signs.
/// A lookup of several apps is resolved for a job's app before it asks (`AppleSeams.of(app:)`).
package protocol TransactionLookup: Sendable {
    func lookUp(transactionID: String, attempt: Int) async -> VerificationOutcome
}

/// The seam to Apple for re-checks: what Apple says of a subscription now (its latest
/// transaction, verified, with the subscription's state in `VerifiedReceipt.renewal`).
package protocol SubscriptionChecking: Sendable {
    /// `knownLatest`, `knownExpiresAt`: the latest period the pipeline knows; every period Apple
    /// began since is in the answer, oldest first, so none is skipped. `knownRevision`: where the
    /// last re-check read the customer's history to (only what changed since is read).
    func check(
        originalTransactionID: String, environment: String, knownLatest: String?, knownExpiresAt: Int64?, knownRevision: String?,
        attempt: Int
    ) async -> VerificationOutcome
}

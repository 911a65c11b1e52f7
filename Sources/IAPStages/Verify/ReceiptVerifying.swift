import AppleReceipt

/// The seam to Apple: the real client, or anything that answers the same way.
package protocol ReceiptVerifying: Sendable {
    func verify(receiptData: String, attempt: Int) async -> VerificationOutcome
    /// The same, for the app the client named (`bundle_id`), or with `nil` for whichever app the
    /// receipt is; a verifier of one app ignores it.
    func verify(receiptData: String, attempt: Int, bundleID: String?) async -> VerificationOutcome
}

extension ReceiptVerifying {
    package func verify(receiptData: String, attempt: Int, bundleID: String?) async -> VerificationOutcome {
        await verify(receiptData: receiptData, attempt: attempt)
    }
}

extension AppleVerifier: ReceiptVerifying {}

import AppleReceipt

/// The seam to Apple: the real client, or anything that answers the same way. A verifier of
/// several apps is resolved for a job's app before it asks (`AppleSeams.of(app:)`).
package protocol ReceiptVerifying: Sendable {
    func verify(receiptData: String, attempt: Int) async -> VerificationOutcome
}

extension AppleVerifier: ReceiptVerifying {}

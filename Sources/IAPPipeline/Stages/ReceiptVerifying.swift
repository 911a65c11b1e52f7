import AppleReceipt

/// The seam to Apple: the real client, or anything that answers the same way.
public protocol ReceiptVerifying: Sendable {
    func verify(receiptData: String, attempt: Int) async -> VerificationOutcome
}

extension AppleVerifier: ReceiptVerifying {}

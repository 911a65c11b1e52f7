import AppleReceipt

/// The seam to the App Store Server API: looks a transaction id up and verifies what Apple signs.
public protocol TransactionLookup: Sendable {
    func lookUp(transactionID: String, attempt: Int) async -> VerificationOutcome
}

/// The parts of Apple's verifyReceipt answer that the pipeline reads.
public struct VerifyReceiptResponse: Sendable, Equatable {
    public var status: Int
    public var environment: String?
    public var isRetryable: Bool
    public var receipt: Receipt?
    public var latestReceiptInfo: [InAppTransaction]
    /// `pending_renewal_info`: each subscription's renewal state (auto-renew, billing retry, grace period).
    public var pendingRenewalInfo: [PendingRenewal] = []

    public struct PendingRenewal: Sendable, Equatable {
        public var originalTransactionID: String
        public var autoRenewStatus: Int?
        public var isInBillingRetryPeriod: Bool
        public var gracePeriodExpiresDateMs: Int64?
        /// `expiration_intent`, Apple's number: why it expired (as the renewal info's `expirationIntent`).
        public var expirationIntent: Int?
    }

    public struct Receipt: Sendable, Equatable {
        public var bundleID: String?
        public var inApp: [InAppTransaction]
    }

    /// Every purchase in the answer, `in_app` first, each transaction once.
    public var transactions: [InAppTransaction] {
        var seen = Set<String>()
        return ((receipt?.inApp ?? []) + latestReceiptInfo).filter { seen.insert($0.transactionID).inserted }
    }
}

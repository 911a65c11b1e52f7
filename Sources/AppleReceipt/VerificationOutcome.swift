/// How one verification attempt ended.
public enum VerificationOutcome: Sendable, Equatable {
    /// Apple accepted the receipt.
    case valid(VerifiedReceipt)
    /// Apple rejected the receipt, or signed data did not verify; `reason` is a stable code such
    /// as `apple_status_21003` or `invalid_signature`, `detail` the precise cause when there is one.
    case rejected(reason: String, detail: String? = nil)
    /// Our configuration is wrong: dead-letter and alert, do not reject the user's purchase.
    case misconfigured(reason: String, detail: String)
    /// Try again later, no sooner than `retryAfterMs` when Apple said so.
    case transient(reason: String, detail: String, retryAfterMs: Int?)
}

/// A receipt Apple accepted, reduced to what the pipeline grants from.
public struct VerifiedReceipt: Codable, Sendable, Equatable {
    public var environment: String
    public var bundleID: String
    public var transactions: [InAppTransaction]
    /// A re-check's answer: what Apple says of the subscription as a whole now; `nil` otherwise.
    public var renewal: SubscriptionRenewal?
    /// A verifyReceipt answer's `pending_renewal_info`, for a re-check by receipt; not carried on.
    public var pendingRenewals: [VerifyReceiptResponse.PendingRenewal] = []

    public init(environment: String, bundleID: String, transactions: [InAppTransaction], renewal: SubscriptionRenewal? = nil) {
        self.environment = environment
        self.bundleID = bundleID
        self.transactions = transactions
        self.renewal = renewal
    }

    enum CodingKeys: String, CodingKey {
        case environment
        case bundleID = "bundle_id"
        case transactions, renewal
    }
}

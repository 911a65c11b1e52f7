/// A signed renewal info payload (`JWSRenewalInfoDecodedPayload`), the parts kept for subscriptions.
public struct JWSRenewalInfo: SignedPayload, Codable, Equatable {
    public var originalTransactionID: String
    public var autoRenewProductID: String?
    public var productID: String?
    public var autoRenewStatus: Int?
    public var isInBillingRetryPeriod: Bool?
    public var gracePeriodExpiresDate: Int64?
    public var renewalDate: Int64?
    public var environment: String?
    public var signedDate: Int64?
    /// The Apple Account the subscription is bought on (Apple sends it from iOS 18.4 on).
    public var appTransactionID: String?
    /// Why it expired (`expirationIntent`): 1 the customer cancelled, 2 a billing error, 3 no
    /// consent to a price increase, 4 the product no longer for sale, 5 other.
    public var expirationIntent: Int?
    /// Apple's win-back offers the subscriber may have (StoreKit applies them without a signature).
    public var eligibleWinBackOfferIDs: [String]?
    /// How the subscription renews (`renewalBillingPlanType`, API 1.21): `BILLED_UPFRONT`, or
    /// `MONTHLY` into a monthly subscription with a 12-month commitment.
    public var renewalBillingPlanType: String?
    /// What the commitment the subscription is in renews into (only while it is in one).
    public var commitmentInfo: RenewalCommitment?

    public init(
        originalTransactionID: String, productID: String? = nil, autoRenewStatus: Int? = 1, isInBillingRetryPeriod: Bool? = nil,
        gracePeriodExpiresDate: Int64? = nil, environment: String? = nil, signedDate: Int64? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.autoRenewProductID = productID
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.environment = environment
        self.signedDate = signedDate
    }

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "originalTransactionId"
        case autoRenewProductID = "autoRenewProductId"
        case productID = "productId"
        case autoRenewStatus, isInBillingRetryPeriod, gracePeriodExpiresDate, renewalDate, environment, signedDate, expirationIntent
        case eligibleWinBackOfferIDs = "eligibleWinBackOfferIds"
        case appTransactionID = "appTransactionId"
        case renewalBillingPlanType, commitmentInfo
    }
}

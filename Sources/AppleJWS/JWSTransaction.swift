/// A StoreKit 2 signed transaction's payload (`JWSTransactionDecodedPayload`), the parts the
/// pipeline reads. Dates are milliseconds since 1970.
public struct JWSTransaction: SignedPayload, Codable, Equatable {
    public var transactionID: String
    public var originalTransactionID: String
    public var webOrderLineItemID: String?
    public var bundleID: String
    public var productID: String
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Int64?
    public var originalPurchaseDate: Int64?
    public var expiresDate: Int64?
    public var quantity: Int?
    public var type: String?
    public var appAccountToken: String?
    public var inAppOwnershipType: String?
    public var signedDate: Int64?
    public var revocationDate: Int64?
    public var revocationReason: Int?
    public var revocationType: String?
    /// A partial refund's share (`REFUND_PRORATED`), in milliunits: 100000 is all of it.
    public var revocationPercentage: Int?
    public var transactionReason: String?
    public var environment: String?
    public var storefront: String?
    public var price: Int64?
    public var currency: String?
    /// The offer the purchase was made with: `offerType` 1 introductory, 2 promotional, 3 offer
    /// code, 4 win-back, 5 retention (an offer a retention message made); its `offerIdentifier`, `offerDiscountType` (`FREE_TRIAL`, `PAY_AS_YOU_GO`,
    /// `PAY_UP_FRONT`, `ONE_TIME`) and `offerPeriod` (ISO 8601 duration).
    public var offerType: Int?
    public var offerIdentifier: String?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    /// The Apple Account's (or family member's) app transaction id: one per account and app,
    /// the same in every transaction it makes (Apple sends it from iOS 18.4 on).
    public var appTransactionID: String?
    /// How the subscription is billed (`billingPlanType`, API 1.21): `BILLED_UPFRONT`, or
    /// `MONTHLY` for a monthly subscription with a 12-month commitment.
    public var billingPlanType: String?
    /// The commitment this transaction's period belongs to (only while the subscription is in one).
    public var commitmentInfo: TransactionCommitment?

    public init(
        transactionID: String, originalTransactionID: String? = nil, webOrderLineItemID: String? = nil,
        bundleID: String, productID: String, purchaseDate: Int64? = nil, expiresDate: Int64? = nil, quantity: Int? = 1,
        type: String? = nil, appAccountToken: String? = nil, signedDate: Int64? = nil, revocationDate: Int64? = nil,
        revocationReason: Int? = nil, environment: String? = "Production"
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID ?? transactionID
        self.webOrderLineItemID = webOrderLineItemID
        self.bundleID = bundleID
        self.productID = productID
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.signedDate = signedDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.environment = environment
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transactionID = "transactionId"
        case originalTransactionID = "originalTransactionId"
        case webOrderLineItemID = "webOrderLineItemId"
        case bundleID = "bundleId"
        case productID = "productId"
        case subscriptionGroupIdentifier, purchaseDate, originalPurchaseDate, expiresDate, quantity, type
        case appAccountToken, inAppOwnershipType, signedDate, revocationDate, revocationReason, revocationType, revocationPercentage
        case transactionReason, environment, storefront, price, currency, offerType, offerIdentifier, offerDiscountType, offerPeriod
        case appTransactionID = "appTransactionId"
        case billingPlanType, commitmentInfo
    }
}

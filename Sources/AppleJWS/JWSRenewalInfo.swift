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

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "originalTransactionId"
        case autoRenewProductID = "autoRenewProductId"
        case productID = "productId"
        case autoRenewStatus, isInBillingRetryPeriod, gracePeriodExpiresDate, renewalDate, environment, signedDate
    }
}

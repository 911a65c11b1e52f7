/// What a subscription in a 12-month commitment renews into, as its signed renewal info says
/// (`commitmentInfo`, App Store Server API 1.21, present only while it is in one): the product
/// and billing plan of the next commitment, whether it renews into one (`1`) or not (`0`), when,
/// and at what price (milliunits).
public struct RenewalCommitment: Codable, Equatable, Sendable {
    public var autoRenewProductID: String?
    public var autoRenewStatus: Int?
    public var renewalBillingPlanType: String?
    public var renewalDate: Int64?
    public var renewalPrice: Int64?

    public init(
        autoRenewProductID: String? = nil, autoRenewStatus: Int? = nil, renewalBillingPlanType: String? = nil,
        renewalDate: Int64? = nil, renewalPrice: Int64? = nil
    ) {
        self.autoRenewProductID = autoRenewProductID
        self.autoRenewStatus = autoRenewStatus
        self.renewalBillingPlanType = renewalBillingPlanType
        self.renewalDate = renewalDate
        self.renewalPrice = renewalPrice
    }

    enum CodingKeys: String, CodingKey {
        case autoRenewProductID = "commitmentAutoRenewProductId"
        case autoRenewStatus = "commitmentAutoRenewStatus"
        case renewalBillingPlanType = "commitmentRenewalBillingPlanType"
        case renewalDate = "commitmentRenewalDate"
        case renewalPrice = "commitmentRenewalPrice"
    }
}

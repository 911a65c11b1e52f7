/// The body of Extend a Subscription Renewal Date (one subscriber) and of Extend Subscription
/// Renewal Dates for All Active Subscribers (`productId`, optional `storefrontCountryCodes`).
/// Apple allows at most 90 days, and two extensions a year per subscriber.
public struct RenewalExtension: Codable, Sendable, Equatable {
    public var extendByDays: Int
    /// Apple's `extendReasonCode`: 0 undeclared, 1 customer satisfaction, 2 other, 3 service
    /// issue or outage.
    public var extendReasonCode: Int
    /// A UUID naming this request: the same one again is the same extension (Apple's idempotency).
    public var requestIdentifier: String
    public var productId: String?
    /// ISO 3166-1 alpha-3 storefronts (`USA`, `FRA`); absent: every storefront.
    public var storefrontCountryCodes: [String]?

    public init(
        extendByDays: Int, extendReasonCode: Int, requestIdentifier: String, productId: String? = nil,
        storefrontCountryCodes: [String]? = nil
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.productId = productId
        self.storefrontCountryCodes = storefrontCountryCodes
    }

    /// The longest extension Apple grants.
    public static let maxDays = 90
    public static let reasonCodes = 0...3
}

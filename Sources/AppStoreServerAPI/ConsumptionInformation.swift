/// The body of Send Consumption Information (`PUT /inApps/v2/transactions/consumption/{id}`):
/// what the pipeline tells Apple about a purchase whose refund a customer asked for. Apple refuses
/// it unless `customerConsented` is true, so it is only ever built for a user who consented.
public struct ConsumptionInformation: Codable, Sendable, Equatable {
    /// Always true: Apple refuses anything else, and the pipeline sends nothing without consent.
    public var customerConsented: Bool
    /// How much of the purchase the customer used, in milliunits (0–100,000); never for an
    /// auto-renewable subscription (Apple computes it), 0 unless `deliveryStatus` is `DELIVERED`.
    public var consumptionPercentage: Int?
    public var deliveryStatus: DeliveryStatus
    public var refundPreference: RefundPreference?
    /// Whether a free sample or trial of the content was offered before the purchase.
    public var sampleContentProvided: Bool

    public init(
        deliveryStatus: DeliveryStatus, refundPreference: RefundPreference?, consumptionPercentage: Int? = nil,
        sampleContentProvided: Bool = false
    ) {
        self.customerConsented = true
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }

    /// Apple's `deliveryStatus`: the game's word when it recorded one
    /// (`PUT /v1/users/{id}/purchases/{transaction_id}/consumption`), else the books'.
    public enum DeliveryStatus: String, Codable, Sendable, CaseIterable {
        /// Delivered and working (the books: granted, and not taken back).
        case delivered = "DELIVERED"
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        /// Not delivered for another reason (the books: held, rejected, revoked, or unknown to us).
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// Apple's `refundPreference` (`IAP_REFUND_PREFERENCE`).
    public enum RefundPreference: String, Codable, Sendable, CaseIterable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }
}

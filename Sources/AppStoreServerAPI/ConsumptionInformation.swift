/// The body of Send Consumption Information (`PUT /inApps/v2/transactions/consumption/{id}`):
/// what the pipeline tells Apple about a purchase whose refund a customer asked for. Apple refuses
/// it unless `customerConsented` is true, so it is only ever built for a user who consented.
public struct ConsumptionInformation: Codable, Sendable, Equatable {
    /// Always true: Apple refuses anything else, and the pipeline sends nothing without consent.
    public var customerConsented: Bool
    public var deliveryStatus: DeliveryStatus
    public var refundPreference: RefundPreference?
    /// Whether a free sample or trial of the content was offered before the purchase.
    public var sampleContentProvided: Bool

    public init(deliveryStatus: DeliveryStatus, refundPreference: RefundPreference?, sampleContentProvided: Bool = false) {
        self.customerConsented = true
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }

    /// Apple's `deliveryStatus`, the values the pipeline can vouch for.
    public enum DeliveryStatus: String, Codable, Sendable {
        /// Granted, and not taken back.
        case delivered = "DELIVERED"
        /// Never granted (held, rejected, or unknown to us).
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// Apple's `refundPreference` (`IAP_REFUND_PREFERENCE`).
    public enum RefundPreference: String, Codable, Sendable, CaseIterable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }
}

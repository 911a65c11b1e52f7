import PlainJSON

/// What Apple says of an auto-renewable subscription as a whole, now (a re-check's answer, from
/// Get All Subscription Statuses and its signed renewal info): the state the pipeline records.
public struct SubscriptionRenewal: Codable, Sendable, Equatable {
    public var originalTransactionID: String
    /// `active`, `expired`, `billing_retry`, `grace_period` or `revoked`.
    public var status: String
    /// `1` when it renews automatically, `0` when the customer turned that off.
    public var autoRenew: Int?
    public var graceExpiresAt: Int64?
    /// When Apple signed it (the renewal info's `signedDate`): the subscription's record applies
    /// news in this order.
    public var signedAt: Int64
    /// Apple's `expirationIntent` (`expiration_intent`) when it said why the subscription expired.
    public var expirationIntent: Int?
    /// Apple's `eligibleWinBackOfferIds` (`eligible_win_back_offer_ids`), when the renewal info says.
    public var eligibleWinBackOfferIDs: [String]?
    /// Where a re-check read the customer's history to (Apple's `revision`): kept on the
    /// subscription's record by the grant, so the next re-check reads only what changed.
    public var historyRevision: String?
    /// How it renews, when the renewal info says its billing plan (`JWSRenewalInfo.renewalPlanFields`).
    public var renewalPlan: [String]?

    public init(
        originalTransactionID: String, status: String, autoRenew: Int?, graceExpiresAt: Int64?, signedAt: Int64,
        expirationIntent: Int? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.status = status
        self.autoRenew = autoRenew
        self.graceExpiresAt = graceExpiresAt
        self.signedAt = signedAt
        self.expirationIntent = expirationIntent
    }

    /// Get All Subscription Statuses' `status`: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public static func status(apple code: Int) -> String? {
        switch code {
        case 1: "active"
        case 2: "expired"
        case 3: "billing_retry"
        case 4: "grace_period"
        case 5: "revoked"
        default: nil
        }
    }

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "original_transaction_id"
        case status
        case autoRenew = "auto_renew"
        case graceExpiresAt = "grace_expires_at"
        case signedAt = "signed_at"
        case expirationIntent = "expiration_intent"
        case eligibleWinBackOfferIDs = "eligible_win_back_offer_ids"
        case historyRevision = "history_revision"
        case renewalPlan = "renewal_plan"
    }

    public init(json: JSONValue) throws(JSONShapeError) {
        originalTransactionID = try json.string("original_transaction_id")
        status = try json.string("status")
        autoRenew = try json.intIfPresent("auto_renew")
        graceExpiresAt = try json.int64IfPresent("grace_expires_at")
        signedAt = try json.int64("signed_at")
        expirationIntent = try json.intIfPresent("expiration_intent")
        eligibleWinBackOfferIDs = try json.arrayIfPresent("eligible_win_back_offer_ids")?.compactMap(\.string)
        historyRevision = try json.stringIfPresent("history_revision")
        renewalPlan = try json.arrayIfPresent("renewal_plan")?.compactMap(\.string)
    }

    public var json: JSONValue { CanonicalJSONWriter.value(write) }

    /// The renewal as a job carries it, in name order.
    public func write(to json: inout CanonicalJSONWriter) {
        json.openObject()
        json.member("auto_renew", int: autoRenew)
        json.member("eligible_win_back_offer_ids", strings: eligibleWinBackOfferIDs)
        json.member("expiration_intent", int: expirationIntent)
        json.member("grace_expires_at", int64: graceExpiresAt)
        json.member("history_revision", historyRevision)
        json.member("original_transaction_id", originalTransactionID)
        json.member("renewal_plan", strings: renewalPlan)
        json.member("signed_at", int64: signedAt)
        json.member("status", status)
        json.closeObject()
    }
}

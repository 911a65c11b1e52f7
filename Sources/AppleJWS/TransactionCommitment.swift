import PlainJSON

/// A monthly subscription's 12-month commitment as a signed transaction says it (`commitmentInfo`,
/// App Store Server API 1.21, present only while the subscription is in one): which of the
/// commitment's billing periods this transaction pays (1…12) and of how many, when the commitment
/// ends (ms), and what the subscription costs after it (milliunits of the transaction's currency).
public struct TransactionCommitment: Codable, Equatable, Sendable {
    public var billingPeriodNumber: Int?
    public var totalBillingPeriods: Int?
    public var commitmentExpiresDate: Int64?
    public var commitmentPrice: Int64?

    public init(billingPeriodNumber: Int?, totalBillingPeriods: Int?, commitmentExpiresDate: Int64?, commitmentPrice: Int64?) {
        self.billingPeriodNumber = billingPeriodNumber
        self.totalBillingPeriods = totalBillingPeriods
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
    }

    /// Read as `Codable` reads it: every member optional, `null` absent, another type an error
    /// naming `member.<name>`, unknown members ignored.
    init(json value: JSONValue, member: String) throws(JSONShapeError) {
        guard case .object = value else { throw JSONShapeError(member: member, reason: "not an object") }
        func named(_ name: String) -> String { "\(member).\(name)" }
        billingPeriodNumber = try value["billingPeriodNumber"]?.int(asMember: named("billingPeriodNumber"))
        totalBillingPeriods = try value["totalBillingPeriods"]?.int(asMember: named("totalBillingPeriods"))
        commitmentExpiresDate = try value["commitmentExpiresDate"]?.int64(asMember: named("commitmentExpiresDate"))
        commitmentPrice = try value["commitmentPrice"]?.int64(asMember: named("commitmentPrice"))
    }
}

import AppleJWS

extension JWSRenewalInfo {
    /// How the subscription renews, as the fields its record keeps (name, value, …):
    /// `renewal_billing_plan_type` and, while it is in a 12-month commitment, what that renews
    /// into: `commitment_renews` (`1`/`0`), `commitment_renewal_product_id`,
    /// `commitment_renewal_billing_plan_type`, `commitment_renewal_at` (ms),
    /// `commitment_renewal_price` (milliunits). `nil` when the renewal info says no billing plan
    /// (before API 1.21): then the record's fields stay as they are.
    public var renewalPlanFields: [String]? {
        guard let renewalBillingPlanType, !renewalBillingPlanType.isEmpty else { return nil }
        let commitment = commitmentInfo
        let fields: [(String, String?)] = [
            ("renewal_billing_plan_type", renewalBillingPlanType),
            ("commitment_renews", commitment?.autoRenewStatus.map { String($0) }),
            ("commitment_renewal_product_id", commitment?.autoRenewProductID),
            ("commitment_renewal_billing_plan_type", commitment?.renewalBillingPlanType),
            ("commitment_renewal_at", commitment?.renewalDate.map { String($0) }),
            ("commitment_renewal_price", commitment?.renewalPrice.map { String($0) }),
        ]
        return fields.flatMap { name, value in value.map { $0.isEmpty ? [] : [name, $0] } ?? [] }
    }
}

import AppleReceipt

extension InAppTransaction {
    /// What the purchase cost and how it was sold, where Apple said it, as name, value, name,
    /// value…: what `grant_purchases` writes on the grant record and its `granted` or `renewed`
    /// entry (and a hold keeps for its `released` one). `price` is Apple's milliunits of
    /// `currency`; `offer_type` Apple's number (1 introductory, 2 promotional, 3 offer code,
    /// 4 win-back, 5 retention); `purchase_date` ms; `billing_plan_type` and, within a 12-month
    /// commitment, `commitment_period` of `commitment_periods`, `commitment_expires_at` (ms) and
    /// `commitment_price` (milliunits). A legacy receipt says no price, no offer and no plan:
    /// those are absent, never invented.
    var saleFields: [String] {
        let fields: [(String, String?)] = [
            ("price", price), ("currency", currency), ("storefront", storefront), ("offer_type", offerType),
            ("offer_identifier", offerIdentifier), ("offer_discount_type", offerDiscountType), ("offer_period", offerPeriod),
            ("in_app_ownership_type", inAppOwnershipType), ("purchase_date", purchaseDateMs),
            ("billing_plan_type", billingPlanType), ("commitment_period", commitmentPeriod),
            ("commitment_periods", commitmentPeriods), ("commitment_expires_at", commitmentExpiresDateMs),
            ("commitment_price", commitmentPrice),
        ]
        return fields.flatMap { name, value in value.map { $0.isEmpty ? [] : [name, $0] } ?? [] }
    }
}

import AppleReceipt

extension InAppTransaction {
    /// What the purchase cost and how it was sold, where Apple said it, as name, value, name,
    /// value…: what `grant_purchases` writes on the grant record and its `granted` or `renewed`
    /// entry (and a hold keeps for its `released` one). `price` is Apple's milliunits of
    /// `currency`; `offer_type` Apple's number (1 introductory, 2 promotional, 3 offer code,
    /// 4 win-back); `purchase_date` ms. A legacy receipt says no price and no offer: those are
    /// absent, never invented.
    var saleFields: [String] {
        let fields: [(String, String?)] = [
            ("price", price), ("currency", currency), ("storefront", storefront), ("offer_type", offerType),
            ("offer_identifier", offerIdentifier), ("offer_discount_type", offerDiscountType), ("offer_period", offerPeriod),
            ("in_app_ownership_type", inAppOwnershipType), ("purchase_date", purchaseDateMs),
        ]
        return fields.flatMap { name, value in value.map { $0.isEmpty ? [] : [name, $0] } ?? [] }
    }
}

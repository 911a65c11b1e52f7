import PlainJSON

extension InAppTransaction {
    /// Reads a transaction as Apple lists it, or as a job carries it: the same members and leniency
    /// as `init(from:)`.
    public init(json: JSONValue) throws(JSONShapeError) {
        transactionID = try json.lenientString("transaction_id")
        originalTransactionID = try json.lenientStringIfPresent("original_transaction_id") ?? transactionID
        productID = try json.lenientString("product_id")
        quantity = try json.lenientStringIfPresent("quantity").flatMap { Int($0) } ?? 1
        webOrderLineItemID = try json.lenientStringIfPresent("web_order_line_item_id")
        purchaseDateMs = try json.lenientStringIfPresent("purchase_date_ms")
        originalPurchaseDateMs = try json.lenientStringIfPresent("original_purchase_date_ms")
        cancellationDateMs = try json.lenientStringIfPresent("cancellation_date_ms")
        expiresDateMs = try json.lenientStringIfPresent("expires_date_ms")
        signedDateMs = try json.lenientStringIfPresent("signed_date_ms")
        appAccountToken = try json.stringIfPresent("app_account_token")
        appTransactionID = try json.stringIfPresent("app_transaction_id")
        inAppOwnershipType = try json.stringIfPresent("in_app_ownership_type")
        currency = try json.stringIfPresent("currency")
        storefront = try json.stringIfPresent("storefront")
        price = try json.lenientStringIfPresent("price")
        offerType = try json.lenientStringIfPresent("offer_type")
        offerIdentifier = try json.stringIfPresent("offer_identifier")
        offerDiscountType = try json.stringIfPresent("offer_discount_type")
        offerPeriod = try json.stringIfPresent("offer_period")
        billingPlanType = try json.stringIfPresent("billing_plan_type")
        commitmentPeriod = try json.lenientStringIfPresent("commitment_period")
        commitmentPeriods = try json.lenientStringIfPresent("commitment_periods")
        commitmentExpiresDateMs = try json.lenientStringIfPresent("commitment_expires_date_ms")
        commitmentPrice = try json.lenientStringIfPresent("commitment_price")
    }

    /// The members `encode(to:)` writes.
    public var json: JSONValue { CanonicalJSONWriter.value(write) }

    /// The members `encode(to:)` writes, in name order (canonical text without a copy).
    public func write(to json: inout CanonicalJSONWriter) {
        json.openObject()
        json.member("app_account_token", appAccountToken)
        json.member("app_transaction_id", appTransactionID)
        json.member("billing_plan_type", billingPlanType)
        json.member("cancellation_date_ms", cancellationDateMs)
        json.member("commitment_expires_date_ms", commitmentExpiresDateMs)
        json.member("commitment_period", commitmentPeriod)
        json.member("commitment_periods", commitmentPeriods)
        json.member("commitment_price", commitmentPrice)
        json.member("currency", currency)
        json.member("expires_date_ms", expiresDateMs)
        json.member("in_app_ownership_type", inAppOwnershipType)
        json.member("offer_discount_type", offerDiscountType)
        json.member("offer_identifier", offerIdentifier)
        json.member("offer_period", offerPeriod)
        json.member("offer_type", offerType)
        json.member("original_purchase_date_ms", originalPurchaseDateMs)
        json.member("original_transaction_id", originalTransactionID)
        json.member("price", price)
        json.member("product_id", productID)
        json.member("purchase_date_ms", purchaseDateMs)
        json.member("quantity", String(quantity))
        json.member("signed_date_ms", signedDateMs)
        json.member("storefront", storefront)
        json.member("transaction_id", transactionID)
        json.member("web_order_line_item_id", webOrderLineItemID)
        json.closeObject()
    }

    /// A JSON array of transactions (absent: none).
    static func list(_ items: [JSONValue]?) throws(JSONShapeError) -> [InAppTransaction] {
        var transactions: [InAppTransaction] = []
        transactions.reserveCapacity(items?.count ?? 0)
        for item in items ?? [] {
            transactions.append(try InAppTransaction(json: item))
        }
        return transactions
    }
}

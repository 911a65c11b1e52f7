import PlainJSON

extension InAppTransaction {
    /// Reads a transaction as Apple lists it, or as a job carries it: the same members and leniency
    /// as `init(from:)`.
    public init(json: JSONValue) throws(JSONShapeError) {
        var json = json
        try self.init(members: &json)
    }

    /// Reads the transaction the cursor is on (a job's, straight from its text).
    public init(reading json: inout JSONCursor) throws(JSONShapeError) {
        try self.init(members: &json)
    }

    /// The one reader of both: each member as it comes, then the required ones checked.
    init<Reader: JSONMemberReading>(members json: inout Reader) throws(JSONShapeError) {
        var read = InAppTransaction(transactionID: "", productID: "")
        var transactionID: String?
        var originalTransactionID: String?
        var productID: String?
        var quantity: String?
        let isObject = try json.members(asMember: "transaction") { name, value throws(JSONShapeError) in
            switch name {
            case "transaction_id": transactionID = try value.lenientString(asMember: "transaction_id")
            case "original_transaction_id": originalTransactionID = try value.lenientString(asMember: "original_transaction_id")
            case "product_id": productID = try value.lenientString(asMember: "product_id")
            case "quantity": quantity = try value.lenientString(asMember: "quantity")
            default: try read.take(name, &value)
            }
        }
        guard isObject else { throw JSONShapeError(member: "transaction_id", reason: "not in an object") }
        guard let transactionID else { throw JSONShapeError(member: "transaction_id", reason: "missing") }
        guard let productID else { throw JSONShapeError(member: "product_id", reason: "missing") }
        read.transactionID = transactionID
        read.originalTransactionID = originalTransactionID ?? transactionID
        read.productID = productID
        read.quantity = quantity.flatMap { Int($0) } ?? 1
        self = read
    }

    /// The optional member `name`, if it is one.
    private mutating func take<Reader: JSONMemberReading>(_ name: JSONName, _ value: inout Reader) throws(JSONShapeError) {
        switch name {
        case "web_order_line_item_id": webOrderLineItemID = try value.lenientString(asMember: "web_order_line_item_id")
        case "purchase_date_ms": purchaseDateMs = try value.lenientString(asMember: "purchase_date_ms")
        case "original_purchase_date_ms": originalPurchaseDateMs = try value.lenientString(asMember: "original_purchase_date_ms")
        case "cancellation_date_ms": cancellationDateMs = try value.lenientString(asMember: "cancellation_date_ms")
        case "expires_date_ms": expiresDateMs = try value.lenientString(asMember: "expires_date_ms")
        case "signed_date_ms": signedDateMs = try value.lenientString(asMember: "signed_date_ms")
        case "app_account_token": appAccountToken = try value.string(asMember: "app_account_token")
        case "app_transaction_id": appTransactionID = try value.string(asMember: "app_transaction_id")
        case "in_app_ownership_type": inAppOwnershipType = try value.string(asMember: "in_app_ownership_type")
        case "currency": currency = try value.string(asMember: "currency")
        case "storefront": storefront = try value.string(asMember: "storefront")
        case "price": price = try value.lenientString(asMember: "price")
        case "offer_type": offerType = try value.lenientString(asMember: "offer_type")
        case "offer_identifier": offerIdentifier = try value.string(asMember: "offer_identifier")
        case "offer_discount_type": offerDiscountType = try value.string(asMember: "offer_discount_type")
        case "offer_period": offerPeriod = try value.string(asMember: "offer_period")
        case "billing_plan_type": billingPlanType = try value.string(asMember: "billing_plan_type")
        case "commitment_period": commitmentPeriod = try value.lenientString(asMember: "commitment_period")
        case "commitment_periods": commitmentPeriods = try value.lenientString(asMember: "commitment_periods")
        case "commitment_expires_date_ms": commitmentExpiresDateMs = try value.lenientString(asMember: "commitment_expires_date_ms")
        case "commitment_price": commitmentPrice = try value.lenientString(asMember: "commitment_price")
        default: break
        }
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

import PlainJSON

/// A signed transaction read with PlainJSON instead of Foundation's `JSONDecoder`, member for
/// member as `Codable` reads it (`CodingKeys`): the four ids required, every other member optional,
/// `null` as absent, a present member of another type an error, unknown members ignored.
/// `JWSTransactionTests` holds the two readers to the same answers.
extension JWSTransaction {
    public static func decode(signed bytes: [UInt8]) throws -> JWSTransaction {
        try JWSTransaction(json: JSONValue(parsing: bytes))
    }

    init(json: JSONValue) throws(JSONShapeError) {
        guard case .object = json else { throw JSONShapeError(member: "transactionId", reason: "not in an object") }
        self.init(
            transactionID: try json.string("transactionId"), originalTransactionID: try json.string("originalTransactionId"),
            webOrderLineItemID: try json.stringIfPresent("webOrderLineItemId"), bundleID: try json.string("bundleId"),
            productID: try json.string("productId"))
        subscriptionGroupIdentifier = try json.stringIfPresent("subscriptionGroupIdentifier")
        purchaseDate = try json.int64IfPresent("purchaseDate")
        originalPurchaseDate = try json.int64IfPresent("originalPurchaseDate")
        expiresDate = try json.int64IfPresent("expiresDate")
        quantity = try json.intIfPresent("quantity")
        type = try json.stringIfPresent("type")
        appAccountToken = try json.stringIfPresent("appAccountToken")
        inAppOwnershipType = try json.stringIfPresent("inAppOwnershipType")
        signedDate = try json.int64IfPresent("signedDate")
        try readRevocation(json)
        try readSale(json)
        appTransactionID = try json.stringIfPresent("appTransactionId")
    }

    private mutating func readRevocation(_ json: JSONValue) throws(JSONShapeError) {
        revocationDate = try json.int64IfPresent("revocationDate")
        revocationReason = try json.intIfPresent("revocationReason")
        revocationType = try json.stringIfPresent("revocationType")
        revocationPercentage = try json.intIfPresent("revocationPercentage")
    }

    private mutating func readSale(_ json: JSONValue) throws(JSONShapeError) {
        transactionReason = try json.stringIfPresent("transactionReason")
        environment = try json.stringIfPresent("environment")
        storefront = try json.stringIfPresent("storefront")
        price = try json.int64IfPresent("price")
        currency = try json.stringIfPresent("currency")
        offerType = try json.intIfPresent("offerType")
        offerIdentifier = try json.stringIfPresent("offerIdentifier")
        offerDiscountType = try json.stringIfPresent("offerDiscountType")
        offerPeriod = try json.stringIfPresent("offerPeriod")
    }
}

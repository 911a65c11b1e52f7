import PlainJSON

/// A signed transaction read with PlainJSON instead of Foundation's `JSONDecoder`, member for
/// member as `Codable` reads it (`CodingKeys`): the four ids required, every other member optional,
/// `null` as absent, a present member of another type an error, unknown members ignored.
/// `JWSTransactionTests` holds the two readers to the same answers and refusals. The members are
/// taken as they are read, without building the object (the dictionary and a lookup per field were
/// most of the reading).
extension JWSTransaction {
    public static func decode(signed bytes: [UInt8]) throws -> JWSTransaction {
        var transaction = JWSTransaction(transactionID: "", bundleID: "", productID: "", quantity: nil, environment: nil)
        transaction.originalPurchaseDate = nil
        var ids: [String: String] = [:]
        try JSONValue.forEachMember(parsing: bytes) { name, value in
            if Self.idNames.contains(name) {
                ids[name] = try Self.string(value, name)
            } else {
                try transaction.read(name, value)
            }
        }
        guard let id = ids["transactionId"], let original = ids["originalTransactionId"], let bundle = ids["bundleId"],
              let product = ids["productId"]
        else {
            throw JSONShapeError(member: Self.idNames.first { ids[$0] == nil } ?? "transactionId", reason: "missing")
        }
        (transaction.transactionID, transaction.originalTransactionID) = (id, original)
        (transaction.bundleID, transaction.productID) = (bundle, product)
        return transaction
    }

    private static let idNames = ["transactionId", "originalTransactionId", "bundleId", "productId"]

    /// One optional member; a name this type does not read is ignored.
    private mutating func read(_ name: String, _ value: JSONValue) throws(JSONShapeError) {
        switch name {
        case "webOrderLineItemId": webOrderLineItemID = try Self.string(value, name)
        case "subscriptionGroupIdentifier": subscriptionGroupIdentifier = try Self.string(value, name)
        case "purchaseDate": purchaseDate = try Self.int64(value, name)
        case "originalPurchaseDate": originalPurchaseDate = try Self.int64(value, name)
        case "expiresDate": expiresDate = try Self.int64(value, name)
        case "quantity": quantity = try Self.int(value, name)
        case "type": type = try Self.string(value, name)
        case "appAccountToken": appAccountToken = try Self.string(value, name)
        case "inAppOwnershipType": inAppOwnershipType = try Self.string(value, name)
        case "signedDate": signedDate = try Self.int64(value, name)
        case "revocationDate": revocationDate = try Self.int64(value, name)
        case "revocationReason": revocationReason = try Self.int(value, name)
        case "revocationType": revocationType = try Self.string(value, name)
        case "revocationPercentage": revocationPercentage = try Self.int(value, name)
        case "transactionReason": transactionReason = try Self.string(value, name)
        case "environment": environment = try Self.string(value, name)
        case "storefront": storefront = try Self.string(value, name)
        case "price": price = try Self.int64(value, name)
        case "currency": currency = try Self.string(value, name)
        case "offerType": offerType = try Self.int(value, name)
        case "offerIdentifier": offerIdentifier = try Self.string(value, name)
        case "offerDiscountType": offerDiscountType = try Self.string(value, name)
        case "offerPeriod": offerPeriod = try Self.string(value, name)
        case "appTransactionId": appTransactionID = try Self.string(value, name)
        default: break
        }
    }

    private static func string(_ value: JSONValue, _ name: String) throws(JSONShapeError) -> String? {
        switch value {
        case .null: return nil
        case .string(let text): return text
        default: throw JSONShapeError(member: name, reason: "not a string")
        }
    }

    private static func int64(_ value: JSONValue, _ name: String) throws(JSONShapeError) -> Int64? {
        if value == .null { return nil }
        guard let number = value.int64 else { throw JSONShapeError(member: name, reason: "not an integer") }
        return number
    }

    private static func int(_ value: JSONValue, _ name: String) throws(JSONShapeError) -> Int? {
        guard let number = try int64(value, name) else { return nil }
        guard let exact = Int(exactly: number) else { throw JSONShapeError(member: name, reason: "out of range") }
        return exact
    }
}

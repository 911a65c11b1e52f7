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
                ids[name] = try value.string(asMember: name)
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
        case "webOrderLineItemId": webOrderLineItemID = try value.string(asMember: name)
        case "subscriptionGroupIdentifier": subscriptionGroupIdentifier = try value.string(asMember: name)
        case "purchaseDate": purchaseDate = try value.int64(asMember: name)
        case "originalPurchaseDate": originalPurchaseDate = try value.int64(asMember: name)
        case "expiresDate": expiresDate = try value.int64(asMember: name)
        case "quantity": quantity = try value.int(asMember: name)
        case "type": type = try value.string(asMember: name)
        case "appAccountToken": appAccountToken = try value.string(asMember: name)
        case "inAppOwnershipType": inAppOwnershipType = try value.string(asMember: name)
        case "signedDate": signedDate = try value.int64(asMember: name)
        case "revocationDate": revocationDate = try value.int64(asMember: name)
        case "revocationReason": revocationReason = try value.int(asMember: name)
        case "revocationType": revocationType = try value.string(asMember: name)
        case "revocationPercentage": revocationPercentage = try value.int(asMember: name)
        case "transactionReason": transactionReason = try value.string(asMember: name)
        case "environment": environment = try value.string(asMember: name)
        case "storefront": storefront = try value.string(asMember: name)
        case "price": price = try value.int64(asMember: name)
        case "currency": currency = try value.string(asMember: name)
        case "offerType": offerType = try value.int(asMember: name)
        case "offerIdentifier": offerIdentifier = try value.string(asMember: name)
        case "offerDiscountType": offerDiscountType = try value.string(asMember: name)
        case "offerPeriod": offerPeriod = try value.string(asMember: name)
        case "appTransactionId": appTransactionID = try value.string(asMember: name)
        default: break
        }
    }
}

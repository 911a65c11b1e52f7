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
        var ids = RequiredIDs()
        try JSONValue.forEachMember(parsing: bytes) { (name: UnsafeBufferPointer<UInt8>, value: JSONValue) in
            guard let member = Self.member(named: name) else { return }
            try transaction.read(member, value, into: &ids)
        }
        guard let id = ids.transaction, let original = ids.original, let bundle = ids.bundle, let product = ids.product else {
            throw JSONShapeError(member: ids.firstMissing, reason: "missing")
        }
        (transaction.transactionID, transaction.originalTransactionID) = (id, original)
        (transaction.bundleID, transaction.productID) = (bundle, product)
        return transaction
    }

    /// The four members every transaction must have, as read so far.
    private struct RequiredIDs {
        var transaction, original, bundle, product: String?

        var firstMissing: String {
            if transaction == nil { return CodingKeys.transactionID.stringValue }
            if original == nil { return CodingKeys.originalTransactionID.stringValue }
            return (bundle == nil ? CodingKeys.bundleID : CodingKeys.productID).stringValue
        }
    }

    /// Each member this type reads, by its name's bytes: a name is matched by its length, then
    /// its bytes (a String made for every name, and compared with every case of a `switch`, was
    /// a third of the reading).
    private static let members: [(name: [UInt8], key: CodingKeys)] = CodingKeys.allCases.map { (Array($0.stringValue.utf8), $0) }

    private static func member(named name: UnsafeBufferPointer<UInt8>) -> CodingKeys? {
        members.first { $0.name.isSame(as: name) }?.key
    }

    /// One member (`null` is absent, another type an error naming it).
    private mutating func read(_ key: CodingKeys, _ value: JSONValue, into ids: inout RequiredIDs) throws(JSONShapeError) {
        let name = key.stringValue
        switch key {
        case .transactionID: ids.transaction = try value.string(asMember: name)
        case .originalTransactionID: ids.original = try value.string(asMember: name)
        case .bundleID: ids.bundle = try value.string(asMember: name)
        case .productID: ids.product = try value.string(asMember: name)
        case .webOrderLineItemID: webOrderLineItemID = try value.string(asMember: name)
        case .subscriptionGroupIdentifier: subscriptionGroupIdentifier = try value.string(asMember: name)
        case .purchaseDate: purchaseDate = try value.int64(asMember: name)
        case .originalPurchaseDate: originalPurchaseDate = try value.int64(asMember: name)
        case .expiresDate: expiresDate = try value.int64(asMember: name)
        case .quantity: quantity = try value.int(asMember: name)
        case .type: type = try value.string(asMember: name)
        case .appAccountToken: appAccountToken = try value.string(asMember: name)
        case .inAppOwnershipType: inAppOwnershipType = try value.string(asMember: name)
        case .signedDate: signedDate = try value.int64(asMember: name)
        case .revocationDate: revocationDate = try value.int64(asMember: name)
        case .revocationReason: revocationReason = try value.int(asMember: name)
        case .revocationType: revocationType = try value.string(asMember: name)
        case .revocationPercentage: revocationPercentage = try value.int(asMember: name)
        case .transactionReason: transactionReason = try value.string(asMember: name)
        case .environment: environment = try value.string(asMember: name)
        case .storefront: storefront = try value.string(asMember: name)
        case .price: price = try value.int64(asMember: name)
        case .currency: currency = try value.string(asMember: name)
        case .offerType: offerType = try value.int(asMember: name)
        case .offerIdentifier: offerIdentifier = try value.string(asMember: name)
        case .offerDiscountType: offerDiscountType = try value.string(asMember: name)
        case .offerPeriod: offerPeriod = try value.string(asMember: name)
        case .appTransactionID: appTransactionID = try value.string(asMember: name)
        case .billingPlanType: billingPlanType = try value.string(asMember: name)
        case .commitmentInfo: commitmentInfo = value == .null ? nil : try TransactionCommitment(json: value, member: name)
        }
    }
}

import AppleReceipt
import PlainJSON

extension Purchase {
    package init(json: JSONValue) throws(JSONShapeError) {
        transactionID = try json.string("transaction_id")
        originalTransactionID = try json.string("original_transaction_id")
        productID = try json.string("product_id")
        quantity = try json.int("quantity")
        unit = try json.stringIfPresent("unit")
        let outcome = try json.string("outcome")
        guard let known = PurchaseOutcome(rawValue: outcome) else {
            throw JSONShapeError(member: "outcome", reason: "unknown outcome \(outcome)")
        }
        self.outcome = known
        reason = try json.stringIfPresent("reason")
        currency = try json.stringIfPresent("currency")
        dailyLimit = try json.intIfPresent("daily_limit")
        kind = try json.stringIfPresent("kind")
        consumable = try json.boolIfPresent("consumable")
        entitlements = try json.arrayIfPresent("entitlements")?.compactMap(\.string)
        expiresAt = try json.int64IfPresent("expires_at")
        signedAt = try json.int64IfPresent("signed_at")
        adopt = try json.boolIfPresent("adopt")
        transaction = try json.objectIfPresent("transaction").map { item throws(JSONShapeError) in try InAppTransaction(json: item) }
    }

    package var json: JSONValue {
        .members([
            "transaction_id": .string(transactionID),
            "original_transaction_id": .string(originalTransactionID),
            "product_id": .string(productID),
            "quantity": .int(quantity),
            "unit": unit.json,
            "outcome": .string(outcome.rawValue),
            "reason": reason.json,
            "currency": currency.json,
            "daily_limit": dailyLimit.map { .int($0) },
            "kind": kind.json,
            "consumable": consumable.map { .bool($0) },
            "entitlements": entitlements.map { .array($0.map(JSONValue.string)) },
            "expires_at": expiresAt.map { .int($0) },
            "signed_at": signedAt.map { .int($0) },
            "adopt": adopt.map { .bool($0) },
            "transaction": transaction?.json,
        ])
    }
}

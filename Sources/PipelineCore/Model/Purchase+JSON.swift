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

    package var json: JSONValue { CanonicalJSONWriter.value(write) }

    /// The purchase as a job carries it, in name order.
    package func write(to json: inout CanonicalJSONWriter) {
        json.openObject()
        json.member("adopt", bool: adopt)
        json.member("consumable", bool: consumable)
        json.member("currency", currency)
        json.member("daily_limit", int: dailyLimit)
        json.member("entitlements", strings: entitlements)
        json.member("expires_at", int64: expiresAt)
        json.member("kind", kind)
        json.member("original_transaction_id", originalTransactionID)
        json.member("outcome", outcome.rawValue)
        json.member("product_id", productID)
        json.member("quantity", int: quantity)
        json.member("reason", reason)
        json.member("signed_at", int64: signedAt)
        if let transaction {
            json.name("transaction")
            transaction.write(to: &json)
        }
        json.member("transaction_id", transactionID)
        json.member("unit", unit)
        json.closeObject()
    }
}

import AppleReceipt
import PlainJSON

extension Purchase {
    /// A purchase as a job carries it, from a tree (its text read again: off the hot path).
    package init(json: JSONValue) throws(JSONShapeError) {
        self = try JSONCursor.read(json.canonicalText) { cursor throws(JSONShapeError) in try Purchase(reading: &cursor) }
    }

    /// Reads the purchase the cursor is on (a grant job's, straight from its text).
    package init(reading json: inout JSONCursor) throws(JSONShapeError) {
        var read = Purchase(transactionID: "", originalTransactionID: "", productID: "", quantity: 0, unit: nil, outcome: .pending)
        var transactionID: String?
        var originalTransactionID: String?
        var productID: String?
        var quantity: Int?
        var outcome: String?
        let isObject = try json.members(asMember: "purchase") { name, value throws(JSONShapeError) in
            switch name {
            case "transaction_id": transactionID = try value.string(asMember: "transaction_id")
            case "original_transaction_id": originalTransactionID = try value.string(asMember: "original_transaction_id")
            case "product_id": productID = try value.string(asMember: "product_id")
            case "quantity": quantity = try value.int(asMember: "quantity")
            case "outcome": outcome = try value.string(asMember: "outcome")
            default: try read.take(name, &value)
            }
        }
        guard isObject else { throw JSONShapeError(member: "transaction_id", reason: "not in an object") }
        guard let transactionID else { throw JSONShapeError(member: "transaction_id", reason: "missing") }
        guard let originalTransactionID else { throw JSONShapeError(member: "original_transaction_id", reason: "missing") }
        guard let productID else { throw JSONShapeError(member: "product_id", reason: "missing") }
        guard let quantity else { throw JSONShapeError(member: "quantity", reason: "missing") }
        guard let outcome else { throw JSONShapeError(member: "outcome", reason: "missing") }
        guard let known = PurchaseOutcome(rawValue: outcome) else {
            throw JSONShapeError(member: "outcome", reason: "unknown outcome \(outcome)")
        }
        read.transactionID = transactionID
        read.originalTransactionID = originalTransactionID
        read.productID = productID
        read.quantity = quantity
        read.outcome = known
        self = read
    }

    /// The optional member `name`, if it is one.
    private mutating func take(_ name: JSONName, _ value: inout JSONCursor) throws(JSONShapeError) {
        switch name {
        case "unit": unit = try value.string(asMember: "unit")
        case "reason": reason = try value.string(asMember: "reason")
        case "currency": currency = try value.string(asMember: "currency")
        case "daily_limit": dailyLimit = try value.int(asMember: "daily_limit")
        case "kind": kind = try value.string(asMember: "kind")
        case "consumable": consumable = try value.bool(asMember: "consumable")
        case "entitlements":
            var names: [String] = []
            // Items that are not strings are left out, as before.
            let isArray = try value.items(asMember: "entitlements") { item throws(JSONShapeError) in
                if let name = try? item.string(asMember: "entitlements") { names.append(name) }
            }
            entitlements = isArray ? names : nil
        case "expires_at": expiresAt = try value.int64(asMember: "expires_at")
        case "signed_at": signedAt = try value.int64(asMember: "signed_at")
        case "adopt": adopt = try value.bool(asMember: "adopt")
        case "transaction":
            transaction = try value.readNull() ? nil : InAppTransaction(reading: &value)
        default: break
        }
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

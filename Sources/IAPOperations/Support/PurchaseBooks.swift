import AppleReceipt
import IAPStages
import PlainJSON

/// What the pipeline's books say about one purchase Apple knows, for the support desk: its claim
/// (the ticket that claimed its grant unit, and that ticket's status), its grant record, the owner
/// of its original transaction, a hold, a refund Apple reported before any grant, an unclaimed
/// entry (Apple told us of it, no user sent it), and its subscription record.
package struct PurchaseBooks: Sendable, Equatable {
    /// The purchase as Apple signed it.
    package var transaction: InAppTransaction
    package var environment: String
    /// Its grant unit (`nil` when the catalog does not know the product: nothing can be granted).
    package var unit: String?
    package var claimTicket: String?
    package var claimStatus: String?
    /// The grant record's fields (`user_id`, `granted_at`, `source`, `revoked_at`, …).
    package var grant: [String: String] = [:]
    package var owner: String?
    /// The hold's fields (`status` `held`/`released`/`rejected`, `reason`, …).
    package var hold: [String: String] = [:]
    package var refundedAt: String?
    package var unclaimed = false
    /// The subscription record's fields, without the receipt it keeps (a secret).
    package var subscription: [String: String] = [:]

    package init(transaction: InAppTransaction, environment: String, unit: String?) {
        self.transaction = transaction
        self.environment = environment
        self.unit = unit
    }

    /// One word for where the purchase stands: `granted`, `revoked`, `held`, `rejected` (a
    /// decided hold), `refunded` (Apple refunded it before any grant), `claimed` (a ticket has it
    /// and is not through), `unclaimed` (Apple told us of it; no user sent it), `unknown` (not in
    /// the books: nobody sent it, or the catalog does not know its product).
    package var state: String {
        if !grant.isEmpty { return (grant["revoked_at"] ?? "").isEmpty ? "granted" : "revoked" }
        if hold["status"] == "held" { return "held" }
        if hold["status"] == "rejected" { return "rejected" }
        if refundedAt != nil { return "refunded" }
        if claimTicket != nil { return "claimed" }
        if unclaimed { return "unclaimed" }
        return "unknown"
    }

    /// Nobody was granted it and Apple did not refund it: support may grant it (through the
    /// pipeline's own steps, which still claim it once).
    package var isGrantable: Bool {
        ["unknown", "unclaimed"].contains(state) && !transaction.isRefunded && unit != nil
    }

    package var json: JSONValue {
        .members([
            "transaction_id": .string(transaction.transactionID),
            "original_transaction_id": .string(transaction.originalTransactionID),
            "product_id": .string(transaction.productID),
            "quantity": .int(transaction.quantity),
            "purchase_date_ms": .string(transaction.purchaseDateMs ?? ""),
            "environment": .string(environment),
            "refunded_by_apple": .bool(transaction.isRefunded),
            "state": .string(state),
            "unit": unit.map(JSONValue.string) ?? .null,
            "claim": claimTicket.map { .members(["ticket": .string($0), "status": .string(claimStatus ?? "")]) } ?? .null,
            "grant": Self.object(grant),
            "owner": owner.map(JSONValue.string) ?? .null,
            "hold": Self.object(hold),
            "refunded_at": refundedAt.map(JSONValue.string) ?? .null,
            "unclaimed": .bool(unclaimed),
            "subscription": Self.object(subscription),
        ])
    }

    private static func object(_ fields: [String: String]) -> JSONValue {
        fields.isEmpty ? .null : .object(fields.mapValues(JSONValue.string))
    }
}

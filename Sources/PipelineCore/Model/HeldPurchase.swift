/// A purchase the purchase policy held from its grant, as its `iap:held:<unit>` hash records it.
package struct HeldPurchase: Codable, Sendable, Equatable {
    package var unit: String
    /// `held`, then `released` or `rejected`.
    package var status: String
    /// The rule that held it (`currency_not_allowed`, `daily_limit_exceeded`, …).
    package var reason: String
    package var ticket: String
    package var userID: String
    package var productID: String
    package var quantity: Int
    package var transactionID: String
    package var originalTransactionID: String
    package var environment: String
    package var currency: String?
    package var source: String
    package var heldAt: Int64
    package var decidedAt: Int64?
    package var decidedBy: String?
    package var note: String?
    /// The Apple Account that bought it (`appTransactionId`), when Apple said.
    package var appTransactionID: String?

    enum CodingKeys: String, CodingKey {
        case unit, status, reason, ticket, quantity, environment, currency, source, note
        case userID = "user_id"
        case productID = "product_id"
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
        case heldAt = "held_at"
        case decidedAt = "decided_at"
        case decidedBy = "decided_by"
        case appTransactionID = "app_transaction_id"
    }

    /// Reads the hash; `nil` when it is empty.
    package init?(hash: [String: String]) {
        guard let unit = hash["unit"], let status = hash["status"] else { return nil }
        func text(_ key: String) -> String? { hash[key].flatMap { $0.isEmpty ? nil : $0 } }
        self.unit = unit
        self.status = status
        reason = hash["reason"] ?? ""
        ticket = hash["ticket"] ?? ""
        userID = hash["user_id"] ?? ""
        productID = hash["product_id"] ?? ""
        quantity = hash["quantity"].flatMap { Int($0) } ?? 0
        transactionID = hash["transaction_id"] ?? ""
        originalTransactionID = hash["original_transaction_id"] ?? ""
        environment = hash["environment"] ?? ""
        currency = text("currency")
        source = hash["source"] ?? ""
        heldAt = hash["held_at"].flatMap { Int64($0) } ?? 0
        decidedAt = hash["decided_at"].flatMap { Int64($0) }
        decidedBy = text("decided_by")
        note = text("note")
        appTransactionID = text("app_transaction_id")
    }
}

/// What an operator's release or rejection of a held purchase did.
package enum HeldPurchaseResult: Sendable, Equatable {
    /// Granted once (`released`), or rejected: by the operator, or because Apple refunded it meanwhile.
    case decided(String)
    /// An operator decided it before (`released` or `rejected`): nothing changed.
    case alreadyDecided(String)
    /// No purchase is held under that unit.
    case notFound
}

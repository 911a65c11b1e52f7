import AppleReceipt

/// One purchase a job may grant, as it travels from dedupe to grant and ends up on the ticket.
package struct Purchase: Codable, Sendable, Equatable {
    package var transactionID: String
    package var originalTransactionID: String
    package var productID: String
    package var quantity: Int
    /// The grant unit (`iap:txn:<unit>`); absent when the purchase is rejected before claiming.
    package var unit: String?
    package var outcome: PurchaseOutcome
    package var reason: String?
    /// The currency it was paid in (ISO 4217), when known: the signed transaction's, or for a
    /// legacy receipt the client's word.
    package var currency: String?
    /// The catalog's `daily_limit_per_user` for its product, set by the dedupe stage: the grant
    /// stage holds it when the user was granted this many of the product in the last 24 hours.
    package var dailyLimit: Int?
    /// For what the grant gives beyond itself: `non_consumable` (entitlements for life) or
    /// `auto_renewable` (the subscription's record); absent for the rest.
    package var kind: String?
    /// `true` for a consumable (the catalog's type, set by the dedupe stage): the grant finishes it
    /// at Apple when `IAP_FINISH_TRANSACTIONS` is on.
    package var consumable: Bool?
    /// The catalog's entitlements of the product (for the fulfilment stream's entitlement events).
    package var entitlements: [String]?
    /// A subscription period's end, and when Apple said so (ms); see `InAppTransaction`.
    package var expiresAt: Int64?
    package var signedAt: Int64?
    /// `true` for a pre-adoption purchase under `IAP_PRE_ADOPTION=record` (set by the dedupe
    /// stage): the grant stage records and owns it as a grant, its event `adopted`, its outcome `adopted`.
    package var adopt: Bool?
    /// Apple's word on it, as dedupe read it from the verified answer: what grant writes from
    /// it (its app account token, Apple Account, price and offer). Rides the grant job only (the
    /// job carries no receipt); never on the ticket.
    package var transaction: InAppTransaction? = nil

    package init(
        transactionID: String, originalTransactionID: String, productID: String, quantity: Int,
        unit: String?, outcome: PurchaseOutcome, reason: String? = nil
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.quantity = quantity
        self.unit = unit
        self.outcome = outcome
        self.reason = reason
    }

    /// Whether the dedupe stage claims its unit: pending ones, and held ones (nobody else may be
    /// granted a purchase while it waits for an operator).
    package var isClaimed: Bool { outcome == .pending || outcome == .held }

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case quantity, unit, outcome, reason, currency
        case dailyLimit = "daily_limit"
        case kind, consumable, entitlements
        case expiresAt = "expires_at"
        case signedAt = "signed_at"
        case adopt
    }
}

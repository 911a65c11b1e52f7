/// One purchase a job may grant, as it travels from dedupe to grant and ends up on the ticket.
public struct Purchase: Codable, Sendable, Equatable {
    public var transactionID: String
    public var originalTransactionID: String
    public var productID: String
    public var quantity: Int
    /// The grant unit (`iap:txn:<unit>`); absent when the purchase is rejected before claiming.
    public var unit: String?
    public var outcome: PurchaseOutcome
    public var reason: String?

    public init(
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

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case quantity, unit, outcome, reason
    }
}

/// Apple's verifyReceipt answer for a good receipt, with the fields the pipeline reads.
struct SimulatedAnswer: Encodable {
    struct Receipt: Encodable {
        var receiptType: String
        var bundleID: String
        var applicationVersion = "1"
        var requestDateMs: String
        var inApp: [InApp]

        enum CodingKeys: String, CodingKey {
            case receiptType = "receipt_type", bundleID = "bundle_id", applicationVersion = "application_version"
            case requestDateMs = "request_date_ms", inApp = "in_app"
        }
    }

    struct InApp: Encodable {
        var transactionID: String
        var originalTransactionID: String
        var productID: String
        var quantity: String
        var purchaseDateMs: String
        var originalPurchaseDateMs: String
        var isTrialPeriod = "false"
        var webOrderLineItemID: String?
        var cancellationDateMs: String?

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id", originalTransactionID = "original_transaction_id"
            case productID = "product_id", quantity, purchaseDateMs = "purchase_date_ms"
            case originalPurchaseDateMs = "original_purchase_date_ms", isTrialPeriod = "is_trial_period"
            case webOrderLineItemID = "web_order_line_item_id", cancellationDateMs = "cancellation_date_ms"
        }
    }

    var status = 0
    var environment: String
    var receipt: Receipt
}

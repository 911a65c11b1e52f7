import AppleJWS

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
        var expiresDateMs: String?

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id", originalTransactionID = "original_transaction_id"
            case productID = "product_id", quantity, purchaseDateMs = "purchase_date_ms"
            case originalPurchaseDateMs = "original_purchase_date_ms", isTrialPeriod = "is_trial_period"
            case webOrderLineItemID = "web_order_line_item_id", cancellationDateMs = "cancellation_date_ms"
            case expiresDateMs = "expires_date_ms"
        }

        init(
            transactionID: String, originalTransactionID: String, productID: String, quantity: String, purchaseDateMs: String,
            originalPurchaseDateMs: String, webOrderLineItemID: String?, cancellationDateMs: String?, expiresDateMs: String? = nil
        ) {
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.productID = productID
            self.quantity = quantity
            self.purchaseDateMs = purchaseDateMs
            self.originalPurchaseDateMs = originalPurchaseDateMs
            self.webOrderLineItemID = webOrderLineItemID
            self.cancellationDateMs = cancellationDateMs
            self.expiresDateMs = expiresDateMs
        }

        /// A played subscription's period, as `latest_receipt_info` lists it.
        init(period transaction: JWSTransaction) {
            self.init(
                transactionID: transaction.transactionID, originalTransactionID: transaction.originalTransactionID,
                productID: transaction.productID, quantity: "1", purchaseDateMs: String(transaction.purchaseDate ?? 0),
                originalPurchaseDateMs: String(transaction.originalPurchaseDate ?? 0),
                webOrderLineItemID: transaction.webOrderLineItemID, cancellationDateMs: transaction.revocationDate.map { String($0) },
                expiresDateMs: transaction.expiresDate.map { String($0) })
        }
    }

    struct PendingRenewal: Encodable {
        var originalTransactionID: String
        var autoRenewStatus: String
        var isInBillingRetryPeriod: String?
        var gracePeriodExpiresDateMs: String?

        enum CodingKeys: String, CodingKey {
            case originalTransactionID = "original_transaction_id", autoRenewStatus = "auto_renew_status"
            case isInBillingRetryPeriod = "is_in_billing_retry_period", gracePeriodExpiresDateMs = "grace_period_expires_date_ms"
        }
    }

    var status = 0
    var environment: String
    var receipt: Receipt
    var latestReceiptInfo: [InApp]?
    var pendingRenewalInfo: [PendingRenewal]?

    enum CodingKeys: String, CodingKey {
        case status, environment, receipt
        case latestReceiptInfo = "latest_receipt_info", pendingRenewalInfo = "pending_renewal_info"
    }
}

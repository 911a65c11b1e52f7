import Foundation

/// What apple-sim reads from a receipt: the receipt data is base64 of this JSON, so a test or
/// benchmark says in the receipt itself what Apple should answer.
public struct SimulatedReceipt: Codable, Sendable, Equatable {
    public struct Transaction: Codable, Sendable, Equatable {
        public var transactionID: String
        public var originalTransactionID: String?
        public var productID: String
        public var quantity: Int?
        public var webOrderLineItemID: String?
        public var cancellationDateMs: String?

        public init(
            transactionID: String, originalTransactionID: String? = nil, productID: String, quantity: Int? = nil,
            webOrderLineItemID: String? = nil, cancellationDateMs: String? = nil
        ) {
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.productID = productID
            self.quantity = quantity
            self.webOrderLineItemID = webOrderLineItemID
            self.cancellationDateMs = cancellationDateMs
        }

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case productID = "product_id"
            case quantity
            case webOrderLineItemID = "web_order_line_item_id"
            case cancellationDateMs = "cancellation_date_ms"
        }
    }

    public var bundleID: String
    /// `Production` or `Sandbox`: the wrong endpoint answers 21007 / 21008.
    public var environment: String
    public var transactions: [Transaction]
    /// Answer this status instead of a valid receipt (21003, 21004, 21100…).
    public var status: Int?
    /// With a forced 211xx status: the `is-retryable` flag.
    public var retryable: Bool?
    /// The first N requests for this receipt fail transiently (-1: every request).
    public var transientFailures: Int?
    /// How they fail: this HTTP status (503, 429, …), else `{"status": 21005}`.
    public var failureHTTPStatus: Int?
    /// With `failureHTTPStatus`: the Retry-After header to send (seconds).
    public var retryAfterSeconds: Int?
    /// A nonce so otherwise identical receipts differ.
    public var nonce: String?
    /// The original transaction id of a subscription apple-sim plays: the answer lists its periods
    /// so far in `latest_receipt_info` and its state in `pending_renewal_info`.
    public var subscription: String?

    public init(
        bundleID: String, environment: String = "Production", transactions: [Transaction], status: Int? = nil,
        retryable: Bool? = nil, transientFailures: Int? = nil, failureHTTPStatus: Int? = nil,
        retryAfterSeconds: Int? = nil, nonce: String? = nil
    ) {
        self.bundleID = bundleID
        self.environment = environment
        self.transactions = transactions
        self.status = status
        self.retryable = retryable
        self.transientFailures = transientFailures
        self.failureHTTPStatus = failureHTTPStatus
        self.retryAfterSeconds = retryAfterSeconds
        self.nonce = nonce
    }

    enum CodingKeys: String, CodingKey {
        case bundleID = "bundle_id"
        case environment, transactions, status, retryable
        case transientFailures = "transient_failures"
        case failureHTTPStatus = "failure_http_status"
        case retryAfterSeconds = "retry_after_s"
        case nonce, subscription
    }

    /// The receipt data a client would send.
    public func receiptData() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try! encoder.encode(self).base64EncodedString()
    }
}

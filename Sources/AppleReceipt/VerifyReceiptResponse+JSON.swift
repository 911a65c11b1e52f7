import PlainJSON

extension VerifyReceiptResponse {
    /// Apple's answer as it came over the wire: not JSON, or JSON of the wrong shape, throws.
    public init(parsing bytes: UnsafeRawBufferPointer) throws {
        try self.init(json: JSONValue(parsing: bytes))
    }

    public init(parsing text: String) throws {
        try self.init(json: JSONValue(parsing: text))
    }

    /// Reads Apple's verifyReceipt answer as `init(from:)` does, without Foundation's coders.
    public init(json: JSONValue) throws(JSONShapeError) {
        guard let status = try json.lenientStringIfPresent("status").flatMap({ Int($0) }) else {
            throw JSONShapeError(member: "status", reason: "missing")
        }
        self.status = status
        environment = try json.lenientStringIfPresent("environment")
        isRetryable = try json.lenientStringIfPresent("is-retryable").map { $0 == "1" || $0 == "true" } ?? false
        // Only a valid answer's receipt matters; a malformed one elsewhere must not hide the status.
        guard status == 0 else {
            receipt = nil
            latestReceiptInfo = []
            return
        }
        receipt = try json.objectIfPresent("receipt").map { receipt throws(JSONShapeError) in try Receipt(json: receipt) }
        latestReceiptInfo = try InAppTransaction.list(json.arrayIfPresent("latest_receipt_info"))
        var pending: [PendingRenewal] = []
        for item in try json.arrayIfPresent("pending_renewal_info") ?? [] {
            guard let original = try item.lenientStringIfPresent("original_transaction_id") else { continue }
            pending.append(PendingRenewal(
                originalTransactionID: original,
                autoRenewStatus: try item.lenientStringIfPresent("auto_renew_status").flatMap { Int($0) },
                isInBillingRetryPeriod: try item.lenientStringIfPresent("is_in_billing_retry_period") == "1",
                gracePeriodExpiresDateMs: try item.lenientStringIfPresent("grace_period_expires_date_ms").flatMap { Int64($0) },
                expirationIntent: try item.lenientStringIfPresent("expiration_intent").flatMap { Int($0) }))
        }
        pendingRenewalInfo = pending
    }
}

extension VerifyReceiptResponse.Receipt {
    public init(json: JSONValue) throws(JSONShapeError) {
        bundleID = try json.lenientStringIfPresent("bundle_id")
        inApp = try InAppTransaction.list(json.arrayIfPresent("in_app"))
    }
}

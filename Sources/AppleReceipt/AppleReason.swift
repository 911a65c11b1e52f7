/// The reasons Apple's clients give (a rejection or a retry): what verifyReceipt, the App Store
/// Server API and the signature checks say, before the pipeline decides what it means. The
/// pipeline's own reasons, and these beside them, are `ReasonCode` (PipelineCore): the one table
/// docs/http-api.md and docs/apple-answers.md publish.
public enum AppleReason {
    public static let invalidSignature = "invalid_signature"
    public static let transactionNotFound = "transaction_not_found"
    /// A legacy receipt that is not an app receipt (`IAP_RECEIPT_MODE=server_api` reads it itself).
    public static let invalidReceipt = "invalid_receipt"
    /// Apple rejected a receipt with this `status`.
    public static func appleStatus(_ status: Int) -> String { "apple_status_\(status)" }
    /// The Server API refused the request's content with this `errorCode`.
    public static func appleAPIError(_ errorCode: Int) -> String { "apple_api_error_\(errorCode)" }
    public static let appleAPIUnauthorized = "apple_api_unauthorized"
    public static let appleAPIMisconfigured = "apple_api_misconfigured"
    /// A 4xx from a verifyReceipt URL (or a 429/5xx, as a retry reason).
    public static func appleHTTP(_ code: Int) -> String { "apple_http_\(code)" }
}

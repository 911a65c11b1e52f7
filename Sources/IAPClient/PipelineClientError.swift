import PlainJSON

/// The intake refused a request: its HTTP status, its machine-readable `code` (`missing_field`,
/// `bad_signature`, `redis_unavailable`, … as docs/http-api.md lists them) and its message.
public struct PipelineClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String
    /// From `Retry-After`, on a 503 or 429.
    public let retryAfter: Duration?

    public init(status: Int, code: String, message: String, retryAfter: Duration? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    /// The intake's `{"error": {"code", "message"}}`; an answer without one is `http_<status>`.
    init(status: Int, json: JSONValue, retryAfter: Duration?) {
        let error = json["error"]
        self.init(
            status: status, code: error?["code"]?.string ?? "http_\(status)", message: error?["message"]?.string ?? "",
            retryAfter: retryAfter)
    }

    /// Nothing was stored and the cause passes (Redis unavailable or full, the queue full, a rate
    /// exceeded; a 503 or 429 from a proxy in front): the same request may be sent again, signed
    /// anew. A `*_not_configured` 503 is the deployment's settings and is not retried.
    public var isRetryable: Bool {
        (status == 503 || status == 429) && !code.hasSuffix("_not_configured")
    }

    public var description: String { "\(status) \(code): \(message)" }
}

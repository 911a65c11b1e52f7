import Metrics

/// Calls to Apple, by endpoint (`verify_receipt`, the Server API's `transaction_info`, …),
/// environment and HTTP status (`unreachable` when no answer came): `iap_apple_requests_total`
/// and `iap_apple_request_duration_seconds`.
public enum AppleCallMetrics {
    public static func record(endpoint: String, environment: String, status: String, since started: ContinuousClock.Instant) {
        Counter(label: "iap_apple_requests_total", dimensions: [("endpoint", endpoint), ("environment", environment), ("status", status)])
            .increment()
        Timer(label: "iap_apple_request_duration_seconds", dimensions: [("endpoint", endpoint), ("environment", environment)])
            .record(duration: ContinuousClock.now - started)
    }
}

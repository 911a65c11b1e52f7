import IAPMetrics
import Metrics

/// Calls to Apple, by endpoint (`verify_receipt`, the Server API's `transaction_info`, …),
/// environment and HTTP status (`unreachable` when no answer came): `iap_apple_requests_total`
/// and `iap_apple_request_duration_seconds`.
public enum AppleCallMetrics {
    /// A call's two handles, made once per label values (`MetricHandles`): made per call, they
    /// were about 12 thousand instructions a verify job (callgrind).
    private static let requests = MetricHandles<Labels, Counter> { labels in
        Counter(
            label: "iap_apple_requests_total",
            dimensions: [("endpoint", labels.endpoint), ("environment", labels.environment), ("status", labels.status)])
    }
    private static let durations = MetricHandles<Labels, Timer> { labels in
        Timer(label: "iap_apple_request_duration_seconds", dimensions: [("endpoint", labels.endpoint), ("environment", labels.environment)])
    }

    /// A call's label values (`status` empty for the duration, which has none).
    private struct Labels: Hashable, Sendable {
        var endpoint: String
        var environment: String
        var status = ""
    }

    public static func record(endpoint: String, environment: String, status: String, since started: ContinuousClock.Instant) {
        requests[Labels(endpoint: endpoint, environment: environment, status: status)].increment()
        durations[Labels(endpoint: endpoint, environment: environment)].record(duration: ContinuousClock.now - started)
    }

    /// The fleet's Server API budget made a call wait: `iap_apple_rate_limit_waits_total{endpoint,
    /// environment, outcome}` (`waited` in place, or `deferred`: the job retries later) and
    /// `iap_apple_rate_limit_wait_seconds{endpoint, environment}`.
    public static func rateLimitWait(endpoint: String, environment: String, wait: Duration, deferred: Bool) {
        Counter(
            label: "iap_apple_rate_limit_waits_total",
            dimensions: [("endpoint", endpoint), ("environment", environment), ("outcome", deferred ? "deferred" : "waited")]
        ).increment()
        if !deferred {
            Timer(label: "iap_apple_rate_limit_wait_seconds", dimensions: [("endpoint", endpoint), ("environment", environment)])
                .record(duration: wait)
        }
    }
}

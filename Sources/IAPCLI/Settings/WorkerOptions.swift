import ArgumentParser

/// How a stage worker runs: every stage.
public struct WorkerOptions: SettingsGroup {
    @Option(help: "IAP_CONCURRENCY (default 64)") var concurrency: String?
    @Option(help: "IAP_MAX_REDELIVERIES (default 5)") var maxRedeliveries: String?
    @Option(help: "IAP_SHUTDOWN_GRACE_MS (default 25000)") var shutdownGraceMs: String?
    @Option(help: "IAP_METRICS_PORT: serve /metrics (Prometheus) on this port (default: none)") var metricsPort: String?

    public init() {}

    public var flags: [String: String?] {
        [
            "IAP_CONCURRENCY": concurrency, "IAP_MAX_REDELIVERIES": maxRedeliveries, "IAP_SHUTDOWN_GRACE_MS": shutdownGraceMs,
            "IAP_METRICS_PORT": metricsPort,
        ]
    }
}

/// Retries of Apple's transient failures: the verifier.
public struct RetryOptions: SettingsGroup {
    @Option(help: "IAP_MAX_ATTEMPTS (default 12)") var maxAttempts: String?
    @Option(help: "IAP_RETRY_BASE_MS (default 1000)") var retryBaseMs: String?
    @Option(help: "IAP_RETRY_MAX_MS (default 600000)") var retryMaxMs: String?

    public init() {}

    public var flags: [String: String?] {
        ["IAP_MAX_ATTEMPTS": maxAttempts, "IAP_RETRY_BASE_MS": retryBaseMs, "IAP_RETRY_MAX_MS": retryMaxMs]
    }
}

/// The product catalog: the deduper, the notifier, and the intake (for entitlements).
public struct CatalogOptions: SettingsGroup {
    @Option(help: "IAP_PRODUCTS_FILE: products JSON") var productsFile: String?

    public init() {}

    public var flags: [String: String?] { ["IAP_PRODUCTS_FILE": productsFile] }
}

/// The purchase policy (the seeds' fraud rules): the deduper.
public struct PolicyOptions: SettingsGroup {
    @Option(help: "IAP_CURRENCIES: ISO 4217 codes a purchase may be paid in, comma-separated (default any)")
    var currencies: String?
    @Option(help: "IAP_SANDBOX: allow (default), deny, or a file of user ids allowed to use the sandbox") var sandbox: String?
    @Option(help: "IAP_MAX_REFUNDS_PER_USER: hold a user's new purchases from this many refunds on (default 0: never)")
    var maxRefundsPerUser: String?
    @Option(help: "IAP_SHARING_POLICY: bind (default), transfer or share: another account proving an owned purchase")
    var sharingPolicy: String?

    public init() {}

    public var flags: [String: String?] {
        [
            "IAP_CURRENCIES": currencies, "IAP_SANDBOX": sandbox, "IAP_MAX_REFUNDS_PER_USER": maxRefundsPerUser,
            "IAP_SHARING_POLICY": sharingPolicy,
        ]
    }
}

/// When subscriptions are re-checked with Apple: the verifier (which promotes due re-checks), and
/// the granter and notifier (whose steps schedule them).
public struct RecheckOptions: SettingsGroup {
    @Option(help: "IAP_RECHECK_BEFORE_S: ask Apple this long before a subscription period ends (default 3600)")
    var recheckBeforeS: String?
    @Option(help: "IAP_RECHECK_AFTER_S: and this long after it ended without a renewal (default 3600)") var recheckAfterS: String?
    @Option(help: "IAP_RECHECK_MAX: then at most this many more times, waits doubling, while Apple has not settled it (default 5)")
    var recheckMax: String?

    public init() {}

    public var flags: [String: String?] {
        ["IAP_RECHECK_BEFORE_S": recheckBeforeS, "IAP_RECHECK_AFTER_S": recheckAfterS, "IAP_RECHECK_MAX": recheckMax]
    }
}

/// The game backend's webhook: `iap-webhook`.
public struct WebhookOptions: SettingsGroup {
    @Option(help: "IAP_WEBHOOK_URL: where the fulfilment events are POSTed (required)") var webhookURL: String?
    @Option(help: "IAP_WEBHOOK_SECRET: the HMAC-SHA256 signing secret, at least 16 bytes (required; prefer the variable)")
    var webhookSecret: String?
    @Option(help: "IAP_WEBHOOK_MAX_AGE_S: retry an event this long, then dead-letter it (default 259200: 3 days)")
    var webhookMaxAgeS: String?
    @Option(help: "IAP_WEBHOOK_TIMEOUT_MS: each POST's timeout (default 10000)") var webhookTimeoutMs: String?

    public init() {}

    public var flags: [String: String?] {
        [
            "IAP_WEBHOOK_URL": webhookURL, "IAP_WEBHOOK_SECRET": webhookSecret, "IAP_WEBHOOK_MAX_AGE_S": webhookMaxAgeS,
            "IAP_WEBHOOK_TIMEOUT_MS": webhookTimeoutMs,
        ]
    }
}

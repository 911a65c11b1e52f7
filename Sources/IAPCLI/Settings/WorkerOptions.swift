import ArgumentParser

/// How a stage worker runs: every stage.
public struct WorkerOptions: SettingsGroup {
    @Option(help: "IAP_CONCURRENCY (default 64)") var concurrency: String?
    @Option(help: "IAP_MAX_REDELIVERIES (default 5)") var maxRedeliveries: String?
    @Option(help: "IAP_SHUTDOWN_GRACE_MS (default 25000)") var shutdownGraceMs: String?

    public init() {}

    public var flags: [String: String?] {
        ["IAP_CONCURRENCY": concurrency, "IAP_MAX_REDELIVERIES": maxRedeliveries, "IAP_SHUTDOWN_GRACE_MS": shutdownGraceMs]
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

/// The product catalog: the deduper and the notifier.
public struct CatalogOptions: SettingsGroup {
    @Option(help: "IAP_PRODUCTS_FILE: products JSON") var productsFile: String?

    public init() {}

    public var flags: [String: String?] { ["IAP_PRODUCTS_FILE": productsFile] }
}

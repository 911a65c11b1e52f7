import ArgumentParser
import IAPSettings

/// How a stage worker runs: every stage.
package struct WorkerOptions: SettingsGroup {
    @Option(setting: Settings.concurrency) var concurrency: String?
    @Option(setting: Settings.maxRedeliveries) var maxRedeliveries: String?
    @Option(setting: Settings.shutdownGrace) var shutdownGraceMs: String?
    @Option(setting: Settings.metricsPort) var metricsPort: String?
    @Option(setting: Settings.httpHost) var httpHost: String?

    package init() {}
}

/// Retries of transient failures (Apple, the webhook): the verifier, the notifier and the webhook.
package struct RetryOptions: SettingsGroup {
    @Option(setting: Settings.maxAttempts) var maxAttempts: String?
    @Option(setting: Settings.retryBase) var retryBaseMs: String?
    @Option(setting: Settings.retryMax) var retryMaxMs: String?

    package init() {}
}

/// The fleet's Apple breaker: the verifier.
package struct AppleBreakerOptions: SettingsGroup {
    @Option(setting: Settings.appleBreakerFailures) var appleBreakerFailures: String?
    @Option(setting: Settings.appleBreakerProbe) var appleBreakerProbeMs: String?

    package init() {}
}

/// What the grant stage trims: the fulfilment streams and the dead letters.
package struct RetentionOptions: SettingsGroup {
    @Option(setting: Settings.fulfilmentRetention) var fulfilmentRetentionS: String?
    @Option(setting: Settings.deadMax) var deadMax: String?
    @Option(setting: Settings.deadMaxAge) var deadMaxAgeS: String?

    package init() {}
}

/// The product catalog: the deduper, the notifier, the intake and iapctl user (for entitlements).
package struct CatalogOptions: SettingsGroup {
    @Option(setting: Settings.productsFile) var productsFile: String?

    package init() {}
}

/// The purchase policy (the seeds' fraud rules): the deduper.
package struct PolicyOptions: SettingsGroup {
    @Option(setting: Settings.currencies) var currencies: String?
    @Option(setting: Settings.sandbox) var sandbox: String?
    @Option(setting: Settings.maxRefundsPerUser) var maxRefundsPerUser: String?
    @Option(setting: Settings.sharingPolicy) var sharingPolicy: String?

    package init() {}
}

/// When each app moved onto the pipeline and what a purchase made before it gets: the deduper.
package struct AdoptionOptions: SettingsGroup {
    @Option(setting: Settings.adoptedAt) var adoptedAt: String?
    @Option(setting: Settings.preAdoption) var preAdoption: String?

    package init() {}
}

/// When subscriptions are re-checked with Apple: the verifier (which promotes due re-checks), and
/// the granter and notifier (whose steps schedule them), and iapctl held release.
package struct RecheckOptions: SettingsGroup {
    @Option(setting: Settings.recheckBefore) var recheckBeforeS: String?
    @Option(setting: Settings.recheckAfter) var recheckAfterS: String?
    @Option(setting: Settings.recheckMax) var recheckMax: String?

    package init() {}
}

/// The game backend's webhook: `iap-webhook`.
package struct WebhookOptions: SettingsGroup {
    @Option(setting: Settings.webhookURL) var webhookUrl: String?
    @Option(setting: Settings.webhookSecret) var webhookSecret: String?
    @Option(setting: Settings.webhookPreviousSecret) var webhookPreviousSecret: String?
    @Option(setting: Settings.webhooksFile) var webhooksFile: String?
    @Option(setting: Settings.webhookMaxAge) var webhookMaxAgeS: String?
    @Option(setting: Settings.webhookTimeout) var webhookTimeoutMs: String?

    package init() {}
}

/// How many users may buy on one Apple Account: the deduper (which counts) and the verifier (which
/// asks Apple for the account of evidence that does not name it).
package struct AppleAccountOptions: SettingsGroup {
    @Option(name: Settings.maxAccountsPerAppleAccount.name, help: Settings.maxAccountsPerAppleAccount.argumentHelp)
    var maxAccountsPerAppleAccount: String?

    package init() {}
}

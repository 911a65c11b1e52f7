import ArgumentParser
import IAPSettings

/// How a stage worker runs: every stage.
public struct WorkerOptions: SettingsGroup {
    @Option(name: Settings.concurrency.name, help: Settings.concurrency.argumentHelp) var concurrency: String?
    @Option(name: Settings.maxRedeliveries.name, help: Settings.maxRedeliveries.argumentHelp) var maxRedeliveries: String?
    @Option(name: Settings.shutdownGrace.name, help: Settings.shutdownGrace.argumentHelp) var shutdownGrace: String?
    @Option(name: Settings.metricsPort.name, help: Settings.metricsPort.argumentHelp) var metricsPort: String?
    @Option(name: Settings.httpHost.name, help: Settings.httpHost.argumentHelp) var httpHost: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.concurrency: concurrency,
            Settings.maxRedeliveries: maxRedeliveries,
            Settings.shutdownGrace: shutdownGrace,
            Settings.metricsPort: metricsPort,
            Settings.httpHost: httpHost,
        ]
    }
}

/// Retries of transient failures (Apple, the webhook): the verifier, the notifier and the webhook.
public struct RetryOptions: SettingsGroup {
    @Option(name: Settings.maxAttempts.name, help: Settings.maxAttempts.argumentHelp) var maxAttempts: String?
    @Option(name: Settings.retryBase.name, help: Settings.retryBase.argumentHelp) var retryBase: String?
    @Option(name: Settings.retryMax.name, help: Settings.retryMax.argumentHelp) var retryMax: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.maxAttempts: maxAttempts,
            Settings.retryBase: retryBase,
            Settings.retryMax: retryMax,
        ]
    }
}

/// The fleet's Apple breaker: the verifier.
public struct AppleBreakerOptions: SettingsGroup {
    @Option(name: Settings.appleBreakerFailures.name, help: Settings.appleBreakerFailures.argumentHelp) var appleBreakerFailures: String?
    @Option(name: Settings.appleBreakerProbe.name, help: Settings.appleBreakerProbe.argumentHelp) var appleBreakerProbe: String?

    public init() {}

    public var flags: [Setting: String?] {
        [Settings.appleBreakerFailures: appleBreakerFailures, Settings.appleBreakerProbe: appleBreakerProbe]
    }
}

/// What the grant stage trims: the fulfilment streams and the dead letters.
public struct RetentionOptions: SettingsGroup {
    @Option(name: Settings.fulfilmentRetention.name, help: Settings.fulfilmentRetention.argumentHelp) var fulfilmentRetention: String?
    @Option(name: Settings.deadMax.name, help: Settings.deadMax.argumentHelp) var deadMax: String?
    @Option(name: Settings.deadMaxAge.name, help: Settings.deadMaxAge.argumentHelp) var deadMaxAge: String?

    public init() {}

    public var flags: [Setting: String?] {
        [Settings.fulfilmentRetention: fulfilmentRetention, Settings.deadMax: deadMax, Settings.deadMaxAge: deadMaxAge]
    }
}

/// The product catalog: the deduper, the notifier, the intake and iapctl user (for entitlements).
public struct CatalogOptions: SettingsGroup {
    @Option(name: Settings.productsFile.name, help: Settings.productsFile.argumentHelp) var productsFile: String?

    public init() {}

    public var flags: [Setting: String?] { [Settings.productsFile: productsFile] }
}

/// The purchase policy (the seeds' fraud rules): the deduper.
public struct PolicyOptions: SettingsGroup {
    @Option(name: Settings.currencies.name, help: Settings.currencies.argumentHelp) var currencies: String?
    @Option(name: Settings.sandbox.name, help: Settings.sandbox.argumentHelp) var sandbox: String?
    @Option(name: Settings.maxRefundsPerUser.name, help: Settings.maxRefundsPerUser.argumentHelp) var maxRefundsPerUser: String?
    @Option(name: Settings.sharingPolicy.name, help: Settings.sharingPolicy.argumentHelp) var sharingPolicy: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.currencies: currencies,
            Settings.sandbox: sandbox,
            Settings.maxRefundsPerUser: maxRefundsPerUser,
            Settings.sharingPolicy: sharingPolicy,
        ]
    }
}

/// When subscriptions are re-checked with Apple: the verifier (which promotes due re-checks), and
/// the granter and notifier (whose steps schedule them), and iapctl held release.
public struct RecheckOptions: SettingsGroup {
    @Option(name: Settings.recheckBefore.name, help: Settings.recheckBefore.argumentHelp) var recheckBefore: String?
    @Option(name: Settings.recheckAfter.name, help: Settings.recheckAfter.argumentHelp) var recheckAfter: String?
    @Option(name: Settings.recheckMax.name, help: Settings.recheckMax.argumentHelp) var recheckMax: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.recheckBefore: recheckBefore,
            Settings.recheckAfter: recheckAfter,
            Settings.recheckMax: recheckMax,
        ]
    }
}

/// The game backend's webhook: `iap-webhook`.
public struct WebhookOptions: SettingsGroup {
    @Option(name: Settings.webhookURL.name, help: Settings.webhookURL.argumentHelp) var webhookURL: String?
    @Option(name: Settings.webhookSecret.name, help: Settings.webhookSecret.argumentHelp) var webhookSecret: String?
    @Option(name: Settings.webhookPreviousSecret.name, help: Settings.webhookPreviousSecret.argumentHelp) var webhookPreviousSecret: String?
    @Option(name: Settings.webhookMaxAge.name, help: Settings.webhookMaxAge.argumentHelp) var webhookMaxAge: String?
    @Option(name: Settings.webhookTimeout.name, help: Settings.webhookTimeout.argumentHelp) var webhookTimeout: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.webhookURL: webhookURL,
            Settings.webhookSecret: webhookSecret,
            Settings.webhookPreviousSecret: webhookPreviousSecret,
            Settings.webhookMaxAge: webhookMaxAge,
            Settings.webhookTimeout: webhookTimeout,
        ]
    }
}

/// How many users may buy on one Apple Account: the deduper (which counts) and the verifier (which
/// asks Apple for the account of evidence that does not name it).
public struct AppleAccountOptions: SettingsGroup {
    @Option(name: Settings.maxAccountsPerAppleAccount.name, help: Settings.maxAccountsPerAppleAccount.argumentHelp)
    var maxAccountsPerAppleAccount: String?

    public init() {}

    public var flags: [Setting: String?] { [Settings.maxAccountsPerAppleAccount: maxAccountsPerAppleAccount] }
}

import ArgumentParser
import IAPSettings

/// The apps and the roots their signed data must chain to: the intake (notifications) and the verifier.
package struct AppOptions: SettingsGroup {
    @Option(setting: Settings.bundleIDs) var bundleIds: String?
    @Option(setting: Settings.appleRootCerts) var appleRootCerts: String?

    package init() {}
}

/// The App Apple ID production notifications must carry: whoever admits notifications (the
/// intake, the notifier's sweep, `iapctl apple notifications`).
package struct AppAppleIDOptions: SettingsGroup {
    @Option(setting: Settings.appleAppID) var appleAppId: String?

    package init() {}
}

/// The notifier's sweeps (notification history, refund history): how often, and the roots what
/// they read must chain to.
package struct NotificationSweepOptions: SettingsGroup {
    @Option(setting: Settings.notificationSweep) var notificationSweepS: String?
    @Option(setting: Settings.refundSweep) var refundSweepS: String?
    @Option(setting: Settings.appleRootCerts) var appleRootCerts: String?

    package init() {}
}

/// verifyReceipt: the verifier.
package struct ReceiptAPIOptions: SettingsGroup {
    @Option(setting: Settings.appleProductionURL) var appleProductionUrl: String?
    @Option(setting: Settings.appleSandboxURL) var appleSandboxUrl: String?
    @Option(setting: Settings.appleSharedSecret) var appleSharedSecret: String?
    @Option(setting: Settings.appleTimeout) var appleTimeoutMs: String?
    @Option(setting: Settings.receiptMode) var receiptMode: String?

    package init() {}
}

/// The App Store Server API key: the verifier and the notifier call the API; the intake only asks whether it is set.
package struct ServerAPIKeyOptions: SettingsGroup {
    @Option(setting: Settings.appleAPIKeyID) var appleApiKeyId: String?
    @Option(setting: Settings.appleAPIIssuerID) var appleApiIssuerId: String?
    @Option(setting: Settings.appleAPIPrivateKeyFile) var appleApiPrivateKeyFile: String?

    package init() {}
}

/// Where the App Store Server API is and how fast the fleet may call it: the verifier and the notifier.
package struct ServerAPIClientOptions: SettingsGroup {
    @Option(setting: Settings.appleAPIProductionURL) var appleApiProductionUrl: String?
    @Option(setting: Settings.appleAPISandboxURL) var appleApiSandboxUrl: String?
    @Option(setting: Settings.appleAPIMaxRPS) var appleApiMaxRps: String?

    package init() {}
}

/// Answering Apple's consumption requests: the notifier (with the Server API key and client settings).
package struct ConsumptionOptions: SettingsGroup {
    @Option(setting: Settings.refundPreference) var refundPreference: String?
    @Option(setting: Settings.bundleIDs) var bundleIds: String?
    @Option(setting: Settings.appleTimeout) var appleTimeoutMs: String?

    package init() {}
}

/// Whether the granter queues Set App Account Token and Finish Transaction errands.
package struct AccountTokenOptions: SettingsGroup {
    @Option(setting: Settings.setAppAccountTokens) var setAppAccountTokens: String?
    @Option(setting: Settings.finishTransactions) var finishTransactions: String?

    package init() {}
}

/// Several apps' own secrets, keys and catalogs: whoever checks, asks Apple about or grants an app's purchases.
package struct AppsFileOptions: SettingsGroup {
    @Option(setting: Settings.appsFile) var appsFile: String?

    package init() {}
}

/// The In-App Purchase key that signs offers (the intake's `POST /v1/offers/signatures`).
package struct OfferKeyOptions: SettingsGroup {
    @Option(setting: Settings.offerKeyID) var offerKeyId: String?
    @Option(setting: Settings.offerPrivateKeyFile) var offerPrivateKeyFile: String?

    package init() {}
}

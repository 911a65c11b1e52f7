import ArgumentParser
import IAPSettings

/// The apps and the roots their signed data must chain to: the intake (notifications) and the verifier.
public struct AppOptions: SettingsGroup {
    @Option(setting: Settings.bundleIDs) var bundleIds: String?
    @Option(setting: Settings.appleRootCerts) var appleRootCerts: String?

    public init() {}
}

/// The App Apple ID production notifications must carry: whoever admits notifications (the
/// intake, the notifier's sweep, `iapctl apple notifications`).
public struct AppAppleIDOptions: SettingsGroup {
    @Option(setting: Settings.appleAppID) var appleAppId: String?

    public init() {}
}

/// The notifier's sweeps (notification history, refund history): how often, and the roots what
/// they read must chain to.
public struct NotificationSweepOptions: SettingsGroup {
    @Option(setting: Settings.notificationSweep) var notificationSweepS: String?
    @Option(setting: Settings.refundSweep) var refundSweepS: String?
    @Option(setting: Settings.appleRootCerts) var appleRootCerts: String?

    public init() {}
}

/// verifyReceipt: the verifier.
public struct ReceiptAPIOptions: SettingsGroup {
    @Option(setting: Settings.appleProductionURL) var appleProductionUrl: String?
    @Option(setting: Settings.appleSandboxURL) var appleSandboxUrl: String?
    @Option(setting: Settings.appleSharedSecret) var appleSharedSecret: String?
    @Option(setting: Settings.appleTimeout) var appleTimeoutMs: String?
    @Option(setting: Settings.receiptMode) var receiptMode: String?

    public init() {}
}

/// The App Store Server API key: the verifier and the notifier call the API; the intake only asks whether it is set.
public struct ServerAPIKeyOptions: SettingsGroup {
    @Option(setting: Settings.appleAPIKeyID) var appleApiKeyId: String?
    @Option(setting: Settings.appleAPIIssuerID) var appleApiIssuerId: String?
    @Option(setting: Settings.appleAPIPrivateKeyFile) var appleApiPrivateKeyFile: String?

    public init() {}
}

/// Where the App Store Server API is and how fast the fleet may call it: the verifier and the notifier.
public struct ServerAPIClientOptions: SettingsGroup {
    @Option(setting: Settings.appleAPIProductionURL) var appleApiProductionUrl: String?
    @Option(setting: Settings.appleAPISandboxURL) var appleApiSandboxUrl: String?
    @Option(setting: Settings.appleAPIMaxRPS) var appleApiMaxRps: String?

    public init() {}
}

/// Answering Apple's consumption requests: the notifier (with the Server API key and client settings).
public struct ConsumptionOptions: SettingsGroup {
    @Option(setting: Settings.refundPreference) var refundPreference: String?
    @Option(setting: Settings.bundleIDs) var bundleIds: String?
    @Option(setting: Settings.appleTimeout) var appleTimeoutMs: String?

    public init() {}
}

/// Whether the granter queues Set App Account Token and Finish Transaction errands.
public struct AccountTokenOptions: SettingsGroup {
    @Option(setting: Settings.setAppAccountTokens) var setAppAccountTokens: String?
    @Option(setting: Settings.finishTransactions) var finishTransactions: String?

    public init() {}
}

/// Several apps' own secrets, keys and catalogs: whoever checks, asks Apple about or grants an app's purchases.
public struct AppsFileOptions: SettingsGroup {
    @Option(setting: Settings.appsFile) var appsFile: String?

    public init() {}
}

/// The In-App Purchase key that signs offers (the intake's `POST /v1/offers/signatures`).
public struct OfferKeyOptions: SettingsGroup {
    @Option(setting: Settings.offerKeyID) var offerKeyId: String?
    @Option(setting: Settings.offerPrivateKeyFile) var offerPrivateKeyFile: String?

    public init() {}
}

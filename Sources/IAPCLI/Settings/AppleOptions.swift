import ArgumentParser
import IAPSettings

/// The apps and the roots their signed data must chain to: the intake (notifications) and the verifier.
public struct AppOptions: SettingsGroup {
    @Option(name: Settings.bundleIDs.name, help: Settings.bundleIDs.argumentHelp) var bundleIds: String?
    @Option(name: Settings.appleRootCerts.name, help: Settings.appleRootCerts.argumentHelp) var appleRootCerts: String?

    public init() {}

    public var flags: [Setting: String?] { [Settings.bundleIDs: bundleIds, Settings.appleRootCerts: appleRootCerts] }
}

/// The App Apple ID production notifications must carry: whoever admits notifications (the
/// intake, the notifier's sweep, `iapctl apple notifications`).
public struct AppAppleIDOptions: SettingsGroup {
    @Option(name: Settings.appleAppID.name, help: Settings.appleAppID.argumentHelp) var appleAppId: String?

    public init() {}

    public var flags: [Setting: String?] { [Settings.appleAppID: appleAppId] }
}

/// The notifier's sweeps (notification history, refund history): how often, and the roots what
/// they read must chain to.
public struct NotificationSweepOptions: SettingsGroup {
    @Option(name: Settings.notificationSweep.name, help: Settings.notificationSweep.argumentHelp) var notificationSweep: String?
    @Option(name: Settings.refundSweep.name, help: Settings.refundSweep.argumentHelp) var refundSweep: String?
    @Option(name: Settings.appleRootCerts.name, help: Settings.appleRootCerts.argumentHelp) var appleRootCerts: String?

    public init() {}

    public var flags: [Setting: String?] {
        [Settings.notificationSweep: notificationSweep, Settings.refundSweep: refundSweep, Settings.appleRootCerts: appleRootCerts]
    }
}

/// verifyReceipt: the verifier.
public struct ReceiptAPIOptions: SettingsGroup {
    @Option(name: Settings.appleProductionURL.name, help: Settings.appleProductionURL.argumentHelp) var appleProductionUrl: String?
    @Option(name: Settings.appleSandboxURL.name, help: Settings.appleSandboxURL.argumentHelp) var appleSandboxUrl: String?
    @Option(name: Settings.appleSharedSecret.name, help: Settings.appleSharedSecret.argumentHelp) var appleSharedSecret: String?
    @Option(name: Settings.appleTimeout.name, help: Settings.appleTimeout.argumentHelp) var appleTimeout: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.appleProductionURL: appleProductionUrl,
            Settings.appleSandboxURL: appleSandboxUrl,
            Settings.appleSharedSecret: appleSharedSecret,
            Settings.appleTimeout: appleTimeout,
        ]
    }
}

/// The App Store Server API key: the verifier and the notifier call the API; the intake only asks whether it is set.
public struct ServerAPIKeyOptions: SettingsGroup {
    @Option(name: Settings.appleAPIKeyID.name, help: Settings.appleAPIKeyID.argumentHelp) var appleApiKeyId: String?
    @Option(name: Settings.appleAPIIssuerID.name, help: Settings.appleAPIIssuerID.argumentHelp) var appleApiIssuerId: String?
    @Option(name: Settings.appleAPIPrivateKeyFile.name, help: Settings.appleAPIPrivateKeyFile.argumentHelp) var appleApiPrivateKeyFile: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.appleAPIKeyID: appleApiKeyId,
            Settings.appleAPIIssuerID: appleApiIssuerId,
            Settings.appleAPIPrivateKeyFile: appleApiPrivateKeyFile,
        ]
    }
}

/// Where the App Store Server API is and how fast the fleet may call it: the verifier and the notifier.
public struct ServerAPIClientOptions: SettingsGroup {
    @Option(name: Settings.appleAPIProductionURL.name, help: Settings.appleAPIProductionURL.argumentHelp) var appleApiProductionUrl: String?
    @Option(name: Settings.appleAPISandboxURL.name, help: Settings.appleAPISandboxURL.argumentHelp) var appleApiSandboxUrl: String?
    @Option(name: Settings.appleAPIMaxRPS.name, help: Settings.appleAPIMaxRPS.argumentHelp) var appleApiMaxRps: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.appleAPIProductionURL: appleApiProductionUrl,
            Settings.appleAPISandboxURL: appleApiSandboxUrl,
            Settings.appleAPIMaxRPS: appleApiMaxRps,
        ]
    }
}

/// Answering Apple's consumption requests: the notifier (with the Server API key and client settings).
public struct ConsumptionOptions: SettingsGroup {
    @Option(name: Settings.refundPreference.name, help: Settings.refundPreference.argumentHelp) var refundPreference: String?
    @Option(name: Settings.bundleIDs.name, help: Settings.bundleIDs.argumentHelp) var bundleIds: String?
    @Option(name: Settings.appleTimeout.name, help: Settings.appleTimeout.argumentHelp) var appleTimeout: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.refundPreference: refundPreference,
            Settings.bundleIDs: bundleIds,
            Settings.appleTimeout: appleTimeout,
        ]
    }
}

/// Whether the granter queues Set App Account Token errands.
public struct AccountTokenOptions: SettingsGroup {
    @Option(name: Settings.setAppAccountTokens.name, help: Settings.setAppAccountTokens.argumentHelp) var setAppAccountTokens: String?

    public init() {}

    public var flags: [Setting: String?] { [Settings.setAppAccountTokens: setAppAccountTokens] }
}

/// Several apps' own secrets, keys and catalogs: whoever checks, asks Apple about or grants an app's purchases.
public struct AppsFileOptions: SettingsGroup {
    @Option(name: Settings.appsFile.name, help: Settings.appsFile.argumentHelp) var appsFile: String?

    public init() {}

    public var flags: [Setting: String?] { [Settings.appsFile: appsFile] }
}

/// The In-App Purchase key that signs offers (the intake's `POST /v1/offers/signatures`).
public struct OfferKeyOptions: SettingsGroup {
    @Option(name: Settings.offerKeyID.name, help: Settings.offerKeyID.argumentHelp) var offerKeyId: String?
    @Option(name: Settings.offerPrivateKeyFile.name, help: Settings.offerPrivateKeyFile.argumentHelp) var offerPrivateKeyFile: String?

    public init() {}

    public var flags: [Setting: String?] {
        [Settings.offerKeyID: offerKeyId, Settings.offerPrivateKeyFile: offerPrivateKeyFile]
    }
}

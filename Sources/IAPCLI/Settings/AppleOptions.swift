import ArgumentParser

/// The apps and the roots their signed data must chain to: the intake (notifications) and the verifier.
public struct AppOptions: SettingsGroup {
    @Option(help: "IAP_BUNDLE_IDS: comma-separated bundle ids") var bundleIds: String?
    @Option(help: "IAP_APPLE_ROOT_CERTS: comma-separated PEM/DER root files for signed data (default: Apple Root CA - G3)")
    var appleRootCerts: String?

    public init() {}

    public var flags: [String: String?] { ["IAP_BUNDLE_IDS": bundleIds, "IAP_APPLE_ROOT_CERTS": appleRootCerts] }
}

/// verifyReceipt: the verifier.
public struct ReceiptAPIOptions: SettingsGroup {
    @Option(help: "IAP_APPLE_PRODUCTION_URL") var appleProductionUrl: String?
    @Option(help: "IAP_APPLE_SANDBOX_URL") var appleSandboxUrl: String?
    @Option(help: "IAP_APPLE_SHARED_SECRET (prefer the environment: flags show in ps)") var appleSharedSecret: String?
    @Option(help: "IAP_APPLE_TIMEOUT_MS (default 15000)") var appleTimeoutMs: String?

    public init() {}

    public var flags: [String: String?] {
        [
            "IAP_APPLE_PRODUCTION_URL": appleProductionUrl, "IAP_APPLE_SANDBOX_URL": appleSandboxUrl,
            "IAP_APPLE_SHARED_SECRET": appleSharedSecret, "IAP_APPLE_TIMEOUT_MS": appleTimeoutMs,
        ]
    }
}

/// The App Store Server API key: the verifier calls the API; the intake only asks whether it is set.
public struct ServerAPIKeyOptions: SettingsGroup {
    @Option(help: "IAP_APPLE_API_KEY_ID: App Store Server API key id") var appleApiKeyId: String?
    @Option(help: "IAP_APPLE_API_ISSUER_ID: App Store Server API issuer id") var appleApiIssuerId: String?
    @Option(help: "IAP_APPLE_API_PRIVATE_KEY_FILE: the .p8 key (PEM)") var appleApiPrivateKeyFile: String?

    public init() {}

    public var flags: [String: String?] {
        [
            "IAP_APPLE_API_KEY_ID": appleApiKeyId, "IAP_APPLE_API_ISSUER_ID": appleApiIssuerId,
            "IAP_APPLE_API_PRIVATE_KEY_FILE": appleApiPrivateKeyFile,
        ]
    }
}

/// Where the App Store Server API is and how fast the fleet may call it: the verifier.
public struct ServerAPIClientOptions: SettingsGroup {
    @Option(help: "IAP_APPLE_API_PRODUCTION_URL (default https://api.storekit.apple.com)") var appleApiProductionUrl: String?
    @Option(help: "IAP_APPLE_API_SANDBOX_URL (default https://api.storekit-sandbox.apple.com)") var appleApiSandboxUrl: String?
    @Option(help: "IAP_APPLE_API_MAX_RPS: Server API calls/s per endpoint, fleet-wide (default 50; sandbox a tenth)")
    var appleApiMaxRps: String?

    public init() {}

    public var flags: [String: String?] {
        [
            "IAP_APPLE_API_PRODUCTION_URL": appleApiProductionUrl, "IAP_APPLE_API_SANDBOX_URL": appleApiSandboxUrl,
            "IAP_APPLE_API_MAX_RPS": appleApiMaxRps,
        ]
    }
}

/// Answering Apple's consumption requests: the notifier (with the Server API key and client settings).
public struct ConsumptionOptions: SettingsGroup {
    @Option(help: "IAP_REFUND_PREFERENCE: none (default: do not answer), decline, grant_full or grant_prorated")
    var refundPreference: String?
    @Option(help: "IAP_BUNDLE_IDS: comma-separated bundle ids (the first is the Server API token's bid)") var bundleIds: String?
    @Option(help: "IAP_APPLE_TIMEOUT_MS (default 15000)") var appleTimeoutMs: String?

    public init() {}

    public var flags: [String: String?] {
        ["IAP_REFUND_PREFERENCE": refundPreference, "IAP_BUNDLE_IDS": bundleIds, "IAP_APPLE_TIMEOUT_MS": appleTimeoutMs]
    }
}

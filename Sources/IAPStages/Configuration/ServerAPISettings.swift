import IAPSettings

/// The App Store Server API's settings, each checked when read: its URLs
/// (`IAP_APPLE_API_PRODUCTION_URL`, `IAP_APPLE_API_SANDBOX_URL`), the single app's key
/// (`IAP_APPLE_API_KEY_ID`, `IAP_APPLE_API_ISSUER_ID`, `IAP_APPLE_API_PRIVATE_KEY_FILE`: all three
/// or none), the fleet's budget (`IAP_APPLE_API_MAX_RPS`) and whether legacy receipts go to it
/// (`IAP_RECEIPT_MODE`). An app of `IAP_APPS_FILE` may bring its own key (`PipelineConfiguration.serverAPIs()`).
package struct ServerAPISettings: Sendable, Equatable {
    package var productionURL: String
    package var sandboxURL: String
    /// The single app's key (its `.p8` is read when a client is made); `nil`: none set.
    package var key: AppsFile.ServerAPIKey?
    /// Calls per second to each Server API endpoint, fleet-wide, in production (sandbox: a tenth).
    package var maxRPS: Int
    /// `verify_receipt`, `server_api` or `auto`.
    package var receiptMode: String

    package init(reading source: SettingSource) throws(ConfigurationError) {
        productionURL = try source.url(Settings.appleAPIProductionURL)!
        sandboxURL = try source.url(Settings.appleAPISandboxURL)!
        let given = try source.together(
            [Settings.appleAPIKeyID, Settings.appleAPIIssuerID, Settings.appleAPIPrivateKeyFile],
            "the other App Store Server API settings (key id, issuer id, private key file)")
        if let id = given[0], let issuer = given[1], let file = given[2] {
            key = AppsFile.ServerAPIKey(keyID: id, issuerID: issuer, privateKeyFile: file)
        } else {
            key = nil
        }
        maxRPS = try source.count(Settings.appleAPIMaxRPS)
        receiptMode = try source.choice(Settings.receiptMode)
    }
}

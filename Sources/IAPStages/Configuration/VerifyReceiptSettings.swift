import IAPSettings

/// verifyReceipt's settings (`IAP_APPLE_PRODUCTION_URL`, `IAP_APPLE_SANDBOX_URL`,
/// `IAP_APPLE_SHARED_SECRET`) and the timeout of every request to Apple (`IAP_APPLE_TIMEOUT_MS`:
/// verifyReceipt's and the Server API's), each checked when read.
package struct VerifyReceiptSettings: Sendable, Equatable {
    package var productionURL: String
    package var sandboxURL: String
    /// The app's shared secret, sent as verifyReceipt's password; never logged. `nil`: none.
    package var sharedSecret: String?
    package var timeout: Duration

    package init(reading source: SettingSource) throws(ConfigurationError) {
        productionURL = try source.url(Settings.appleProductionURL)!
        sandboxURL = try source.url(Settings.appleSandboxURL)!
        sharedSecret = source.given(Settings.appleSharedSecret)
        timeout = try source.duration(Settings.appleTimeout)
    }
}

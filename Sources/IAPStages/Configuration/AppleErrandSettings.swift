import IAPSettings

/// What the pipeline asks of Apple beside verifying, each with the Server API key: a token-less
/// purchase's app account token set (`IAP_SET_APP_ACCOUNT_TOKENS`), a granted consumable finished
/// (`IAP_FINISH_TRANSACTIONS`), and consumption requests answered with a refund preference
/// (`IAP_REFUND_PREFERENCE`).
package struct AppleErrandSettings: Sendable, Equatable {
    package var setAppAccountTokens: Bool
    package var finishTransactions: Bool
    /// By the request's reason; `nil` (`none`): consumption requests are not answered.
    package var refundPreference: RefundPreferences?

    package init(reading source: SettingSource) throws(ConfigurationError) {
        setAppAccountTokens = try source.choice(Settings.setAppAccountTokens) == "on"
        finishTransactions = try source.choice(Settings.finishTransactions) == "on"
        refundPreference = try RefundPreferences.reading(source)
    }
}

import IAPSettings

/// What the pipeline asks of Apple beside verifying, each with the Server API key: a token-less
/// purchase's app account token set (`IAP_SET_APP_ACCOUNT_TOKENS`), a granted consumable finished
/// (`IAP_FINISH_TRANSACTIONS`), and consumption requests answered with a refund preference
/// (`IAP_REFUND_PREFERENCE`).
public struct AppleErrandSettings: Sendable, Equatable {
    public var setAppAccountTokens: Bool
    public var finishTransactions: Bool
    /// By the request's reason; `nil` (`none`): consumption requests are not answered.
    public var refundPreference: RefundPreferences?

    public init(reading source: SettingSource) throws(ConfigurationError) {
        setAppAccountTokens = try source.choice(Settings.setAppAccountTokens) == "on"
        finishTransactions = try source.choice(Settings.finishTransactions) == "on"
        refundPreference = try RefundPreferences.reading(source)
    }
}

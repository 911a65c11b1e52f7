import AppStoreServerAPI
import PipelineCore

/// The seam to Set App Account Token: the App Store Server API client, or a test's stand-in.
public protocol AppAccountTokenSetting: Sendable {
    func setAppAccountToken(_ token: String, originalTransactionID: String, environment: ServerAPIEnvironment) async -> ServerAPIAnswer
    /// The same with the key of the purchase's app (`IAP_APPS_FILE`); one app's client ignores it.
    func setAppAccountToken(
        _ token: String, originalTransactionID: String, environment: ServerAPIEnvironment, bundleID: String?
    ) async -> ServerAPIAnswer
}

extension AppAccountTokenSetting {
    public func setAppAccountToken(
        _ token: String, originalTransactionID: String, environment: ServerAPIEnvironment, bundleID: String?
    ) async -> ServerAPIAnswer {
        await setAppAccountToken(token, originalTransactionID: originalTransactionID, environment: environment)
    }
}

extension ServerAPIClient: AppAccountTokenSetting {}

/// How the notify stage runs the errands `grant_purchases` queues: who sets the token at Apple,
/// and how often it retries when Apple cannot take the call.
public struct AccountTokenErrands: Sendable {
    public var setter: any AppAccountTokenSetting
    public var retryPolicy: RetryPolicy

    public init(setter: any AppAccountTokenSetting, retryPolicy: RetryPolicy) {
        self.setter = setter
        self.retryPolicy = retryPolicy
    }

    /// Apple's error for a family member's transaction, on which no token can be set.
    static let familyTransactionNotSupported = 4_000_185
}

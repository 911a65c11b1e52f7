import AppStoreServerAPI
import PipelineCore

/// The seam to Set App Account Token: the App Store Server API client, or a test's stand-in.
package protocol AppAccountTokenSetting: Sendable {
    /// With the key of the purchase's app (`IAP_APPS_FILE`); one app's client ignores `bundleID`.
    func setAppAccountToken(
        _ token: String, originalTransactionID: String, environment: ServerAPIEnvironment, bundleID: String?
    ) async -> ServerAPIAnswer
}

extension ServerAPIClient: AppAccountTokenSetting {
    package func setAppAccountToken(
        _ token: String, originalTransactionID: String, environment: ServerAPIEnvironment, bundleID: String?
    ) async -> ServerAPIAnswer {
        await setAppAccountToken(token, originalTransactionID: originalTransactionID, environment: environment)
    }
}

/// The seam to Finish Transaction: the App Store Server API client, or a test's stand-in.
package protocol TransactionFinishing: Sendable {
    /// With the key of the purchase's app (`IAP_APPS_FILE`); one app's client ignores `bundleID`.
    func finishTransaction(_ transactionID: String, environment: ServerAPIEnvironment, bundleID: String?) async -> ServerAPIAnswer
}

extension ServerAPIClient: TransactionFinishing {
    package func finishTransaction(_ transactionID: String, environment: ServerAPIEnvironment, bundleID: String?) async -> ServerAPIAnswer {
        await finishTransaction(transactionID, environment: environment)
    }
}

/// How the notify stage runs the errands `grant_purchases` queues: who sets the token at Apple,
/// who finishes a granted consumable there, and how often each retries when Apple cannot take the call.
package struct AccountTokenErrands: Sendable {
    package var setter: any AppAccountTokenSetting
    /// `nil`: a Finish Transaction errand is recorded as not sent.
    package var finisher: (any TransactionFinishing)?
    package var retryPolicy: RetryPolicy

    package init(setter: any AppAccountTokenSetting, finisher: (any TransactionFinishing)? = nil, retryPolicy: RetryPolicy) {
        self.setter = setter
        self.finisher = finisher
        self.retryPolicy = retryPolicy
    }

    /// Apple's error for a family member's transaction, on which no token can be set.
    static let familyTransactionNotSupported = 4_000_185
}

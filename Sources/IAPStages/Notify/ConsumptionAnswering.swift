import AppStoreServerAPI
import PipelineCore

/// The seam to Send Consumption Information: the App Store Server API client, or a test's stand-in.
package protocol ConsumptionReporting: Sendable {
    /// With the key of the transaction's app (`IAP_APPS_FILE`); one app's client ignores `bundleID`.
    func sendConsumptionInformation(
        _ information: ConsumptionInformation, transactionID: String, environment: ServerAPIEnvironment, bundleID: String?
    ) async -> ServerAPIAnswer
}

extension ServerAPIClient: ConsumptionReporting {
    package func sendConsumptionInformation(
        _ information: ConsumptionInformation, transactionID: String, environment: ServerAPIEnvironment, bundleID: String?
    ) async -> ServerAPIAnswer {
        await sendConsumptionInformation(information, transactionID: transactionID, environment: environment)
    }
}

/// How the notify stage answers Apple's `CONSUMPTION_REQUEST`: to whom, with which refund
/// preference for each reason, and how often it retries when Apple cannot take the answer.
package struct ConsumptionAnswering: Sendable {
    package var reporter: any ConsumptionReporting
    package var preferences: RefundPreferences
    package var retryPolicy: RetryPolicy

    package init(reporter: any ConsumptionReporting, preferences: RefundPreferences, retryPolicy: RetryPolicy) {
        self.reporter = reporter
        self.preferences = preferences
        self.retryPolicy = retryPolicy
    }
}

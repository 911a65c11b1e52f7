import AppStoreServerAPI
import PipelineCore

/// How the notify stage answers Apple's `CONSUMPTION_REQUEST`: with which apps' clients, with which refund
/// preference for each reason, and how often it retries when Apple cannot take the answer.
package struct ConsumptionAnswering: Sendable {
    package var apps: EachApp<ServerAPIClient>
    package var preferences: RefundPreferences
    package var retryPolicy: RetryPolicy
}

import AppStoreServerAPI
import PipelineCore

/// How the notify stage runs the errands `grant_purchases` queues (set the token at Apple, finish
/// a granted consumable there): with which apps' clients, and how often each retries when Apple
/// cannot take the call.
package struct AccountTokenErrands: Sendable {
    package var apps: EachApp<ServerAPIClient>
    package var retryPolicy: RetryPolicy

    /// Apple's error for a family member's transaction, on which no token can be set.
    static let familyTransactionNotSupported = 4_000_185
}

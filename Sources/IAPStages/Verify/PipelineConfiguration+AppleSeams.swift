import AppleJWS
import AppleReceipt
import AppStoreServerAPI
import PipelineCore

/// The verify stage's seams to Apple for the configured apps.
package struct AppleSeams: Sendable {
    package var verifier: any ReceiptVerifying
    /// `nil` without a Server API key.
    package var lookup: (any TransactionLookup)?
    package var subscriptions: (any SubscriptionChecking)?
    /// Get App Transaction Info, when `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT` counts Apple Accounts.
    package var appleAccounts: (any AppleAccountLookup)?
    /// Get Transaction History of a whole customer (a sync); `nil` without a Server API key.
    package var history: (any CustomerHistoryReading)?
}

extension PipelineConfiguration {
    /// One app: verifyReceipt with `IAP_APPLE_SHARED_SECRET` and the one client. Several apps
    /// (`IAP_APPS_FILE`): each app's secret and client, tried app by app unless the client names one.
    package func appleSeams(
        apple: AppleVerifier, clients: [(bundleID: String, client: ServerAPIClient)], signedData: SignedDataVerifier
    ) -> AppleSeams {
        let lookups = clients.map { ($0.bundleID, ServerAPITransactionLookup(client: $0.client, signedData: signedData)) }
        let checks = clients.map { ($0.bundleID, ServerAPISubscriptionCheck(client: $0.client, signedData: signedData)) }
        let accounts = Dictionary(
            clients.map { ($0.bundleID, ServerAPIAppTransactionLookup(client: $0.client, signedData: signedData)) },
            uniquingKeysWith: { first, _ in first })
        let appleAccounts = policy.maxAccountsPerAppleAccount > 0 && !accounts.isEmpty ? AppByAppAccountLookup(apps: accounts) : nil
        let readers = clients.map { ($0.bundleID, ServerAPICustomerHistory(client: $0.client, signedData: signedData)) }
        let history = readers.isEmpty ? nil : AppByAppCustomerHistory(apps: readers)
        guard let secrets = appSecrets else {
            return AppleSeams(
                verifier: apple, lookup: lookups.first?.1, subscriptions: checks.first?.1, appleAccounts: appleAccounts, history: history)
        }
        return AppleSeams(
            verifier: AppByAppReceiptVerifier(verifier: apple, apps: secrets),
            lookup: lookups.isEmpty ? nil : AppByAppTransactionLookup(apps: lookups.map { ($0.0, $0.1 as any TransactionLookup) }),
            subscriptions: checks.isEmpty ? nil : AppByAppSubscriptionCheck(apps: checks.map { ($0.0, $0.1 as any SubscriptionChecking) }),
            appleAccounts: appleAccounts, history: history)
    }
}

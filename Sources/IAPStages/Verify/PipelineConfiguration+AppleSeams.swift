import AppleJWS
import AppleReceipt
import AppStoreServerAPI
import PipelineCore

/// The verify stage's seams to Apple for the configured apps. Built for every app; a job's are
/// resolved once for its app (`of(app:)`), so no seam is told which app it asks for.
package struct AppleSeams: Sendable {
    package var verifier: any ReceiptVerifying
    /// `nil` without a Server API key.
    package var lookup: (any TransactionLookup)?
    package var subscriptions: (any SubscriptionChecking)?
    /// Get App Transaction Info, when `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT` counts Apple Accounts:
    /// set once resolved for an app (`of(app:)` with its bundle id).
    package var appleAccounts: (any AppleAccountLookup)?
    /// Get Transaction History of a whole customer (a sync); `nil` without a Server API key.
    package var history: (any CustomerHistoryReading)?
    /// Each app's own parts, from which `of(app:)` picks.
    fileprivate var apps: Apps

    /// What differs app by app.
    fileprivate struct Apps: Sendable {
        /// Several apps' shared secrets (`IAP_APPS_FILE`); `nil`: the one `IAP_APPLE_SHARED_SECRET`.
        var secrets: AppByAppReceiptVerifier?
        /// Several apps' Server API keys (`IAP_APPS_FILE`).
        var lookups: AppByAppTransactionLookup?
        var readers: EachApp<ServerAPICustomerHistory>?
        /// Each app's Get App Transaction Info; `nil`: Apple Accounts are not counted.
        var accounts: [String: ServerAPIAppTransactionLookup]?
    }

    /// One app: the seams as they are. `verifier` alone: no Server API key.
    package init(
        verifier: any ReceiptVerifying, lookup: (any TransactionLookup)? = nil, subscriptions: (any SubscriptionChecking)? = nil,
        history: (any CustomerHistoryReading)? = nil
    ) {
        self.init(verifier: verifier, lookup: lookup, subscriptions: subscriptions, history: history, apps: Apps())
    }

    fileprivate init(
        verifier: any ReceiptVerifying, lookup: (any TransactionLookup)?, subscriptions: (any SubscriptionChecking)?,
        history: (any CustomerHistoryReading)?, apps: Apps
    ) {
        self.verifier = verifier
        self.lookup = lookup
        self.subscriptions = subscriptions
        self.history = history
        self.apps = apps
    }

    /// Each app's history reader (a legacy receipt read by the Server API resolves its app itself).
    package var readers: EachApp<ServerAPICustomerHistory>? { apps.readers }

    /// The seams for one app: the one a job's client named or its evidence is of; `nil`: none
    /// named, and each app is tried in turn where Apple's answer tells which it is.
    package func of(app bundleID: String?) -> AppleSeams {
        var seams = self
        if let secrets = apps.secrets { seams.verifier = secrets.named(bundleID) }
        if let lookups = apps.lookups { seams.lookup = lookups.named(bundleID) }
        if let readers = apps.readers { seams.history = readers.of(bundleID) }
        if let accounts = apps.accounts, let bundleID {
            seams.appleAccounts = accounts[bundleID] ?? NoAppleAccountLookup(bundleID: bundleID)
        }
        return seams
    }
}

extension PipelineConfiguration {
    /// One app: verifyReceipt with `IAP_APPLE_SHARED_SECRET` and the one client. Several apps
    /// (`IAP_APPS_FILE`): each app's secret and client, tried app by app unless the client names one.
    package func appleSeams(
        apple: AppleVerifier, clients: [(bundleID: String, client: ServerAPIClient)], signedData: SignedDataVerifier
    ) -> AppleSeams {
        let lookups = clients.map { ($0.bundleID, ServerAPITransactionLookup(client: $0.client, signedData: signedData)) }
        let checks = clients.map { ($0.bundleID, ServerAPISubscriptionCheck(client: $0.client, signedData: signedData)) }
        let readers = clients.map { ($0.bundleID, ServerAPICustomerHistory(client: $0.client, signedData: signedData)) }
        var apps = AppleSeams.Apps()
        if policy.maxAccountsPerAppleAccount > 0, !clients.isEmpty {
            apps.accounts = Dictionary(
                clients.map { ($0.bundleID, ServerAPIAppTransactionLookup(client: $0.client, signedData: signedData)) },
                uniquingKeysWith: { first, _ in first })
        }
        apps.readers = readers.isEmpty ? nil : EachApp(readers)
        guard let secrets = appSecrets else {
            return AppleSeams(
                verifier: apple, lookup: lookups.first?.1, subscriptions: checks.first?.1, history: apps.readers?.of(nil),
                apps: apps)
        }
        let verifier = AppByAppReceiptVerifier(verifier: apple, apps: secrets)
        apps.secrets = verifier
        apps.lookups = lookups.isEmpty ? nil : AppByAppTransactionLookup(apps: lookups.map { ($0.0, $0.1 as any TransactionLookup) })
        return AppleSeams(
            verifier: verifier, lookup: apps.lookups,
            subscriptions: checks.isEmpty ? nil : AppByAppSubscriptionCheck(apps: checks.map { ($0.0, $0.1 as any SubscriptionChecking) }),
            history: apps.readers?.of(nil), apps: apps)
    }
}

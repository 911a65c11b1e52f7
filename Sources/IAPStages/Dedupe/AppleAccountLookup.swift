import AppStoreServerAPI

/// The seam to Get App Transaction Info: the Apple Account a purchase was bought on, when its
/// evidence does not say (`IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT` counts accounts by it).
package protocol AppleAccountLookup: Sendable {
    func appTransactionID(for transactionID: String, environment: String, bundleID: String) async -> ServerAPIAppTransactionLookup.Answer
}

/// One lookup per app (its key, its `bid`): the one of the purchase's app asks.
package struct AppByAppAccountLookup: AppleAccountLookup {
    package let apps: [String: ServerAPIAppTransactionLookup]

    package func appTransactionID(
        for transactionID: String, environment: String, bundleID: String
    ) async -> ServerAPIAppTransactionLookup.Answer {
        guard let lookup = apps[bundleID] else { return .none(detail: "no Server API key for \(bundleID.prefix(128))") }
        return await lookup.appTransactionID(for: transactionID, environment: environment)
    }
}

import AppStoreServerAPI

/// The seam to Get App Transaction Info: the Apple Account a purchase was bought on, when its
/// evidence does not say (`IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT` counts accounts by it). One
/// app's lookup: several apps' are resolved for the purchase's app (`AppleSeams.of(app:)`).
package protocol AppleAccountLookup: Sendable {
    func appTransactionID(for transactionID: String, environment: String) async -> ServerAPIAppTransactionLookup.Answer
}

extension ServerAPIAppTransactionLookup: AppleAccountLookup {}

/// The lookup of an app without a Server API key: the account stays unknown, and says why.
package struct NoAppleAccountLookup: AppleAccountLookup {
    package let bundleID: String

    package func appTransactionID(for transactionID: String, environment: String) async -> ServerAPIAppTransactionLookup.Answer {
        .none(detail: "no Server API key for \(bundleID.prefix(128))")
    }
}

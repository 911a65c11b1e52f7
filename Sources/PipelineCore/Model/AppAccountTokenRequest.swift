import PlainJSON

/// A notify job's errand to Apple: set the user's app account token on a purchase that carries
/// none (Set App Account Token, on the original transaction). `grant_purchases` queues it in the
/// step that grants the purchase, so no crash loses it; the notify stage makes the call.
package struct AppAccountTokenRequest: AppleErrand, Codable, Equatable {
    package var originalTransactionID: String
    /// The user's token (lowercase UUID), as bound to them (`user-token:<user>`).
    package var appAccountToken: String
    /// `Production` or `Sandbox`: where the purchase was made.
    package var environment: String
    /// The purchase's app: the call goes out with its key (`IAP_APPS_FILE`).
    package var bundleID: String?

    package init(originalTransactionID: String, appAccountToken: String, environment: String, bundleID: String? = nil) {
        self.originalTransactionID = originalTransactionID
        self.appAccountToken = appAccountToken
        self.environment = environment
        self.bundleID = bundleID
    }

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "original_transaction_id"
        case appAccountToken = "app_account_token"
        case environment
        case bundleID = "bundle_id"
    }

    init(json: JSONValue) throws(JSONShapeError) {
        originalTransactionID = try json.string("original_transaction_id")
        appAccountToken = try json.string("app_account_token")
        environment = try json.stringIfPresent("environment") ?? "Production"
        bundleID = try json.stringIfPresent("bundle_id")
    }

    func write(to json: inout CanonicalJSONWriter) {
        json.openObject()
        json.member("app_account_token", appAccountToken)
        json.member("bundle_id", bundleID)
        json.member("environment", environment)
        json.member("original_transaction_id", originalTransactionID)
        json.closeObject()
    }

    /// Its ticket: `token-<original transaction id>`.
    package static let ticketPrefix = "token"
    package static let source = "app_account_token"

    package var work: Job.Work { .setAppAccountToken(self) }
}

/// The grant stage's part in Set App Account Token: the user's bound token, and how long the
/// errand's ticket lives.
package struct AccountTokenSetting: Sendable, Equatable {
    package var token: String
    package var ticketTTL: Duration

    package init(token: String, ticketTTL: Duration) {
        self.token = token
        self.ticketTTL = ticketTTL
    }
}

import Foundation

/// What a user is entitled to now: `GET /v1/users/{user_id}/entitlements`.
package struct UserEntitlements: Codable, Sendable, Equatable {
    package var userID: String
    package var entitlements: [Entitlement]
    /// When it was read (ISO 8601): the answer is true as of then.
    package var asOf: String

    package init(userID: String, entitlements: [Entitlement], asOf: String) {
        self.userID = userID
        self.entitlements = entitlements
        self.asOf = asOf
    }

    package struct Entitlement: Codable, Sendable, Equatable {
        package var entitlement: String
        package var productID: String
        /// `active`, or `grace_period` (Apple is retrying the payment and the user keeps access).
        package var status: String
        /// A subscription's end (ISO 8601); a non-consumable's entitlements have none.
        package var expiresAt: String?
        package var originalTransactionID: String
        /// A grant for a time's id (`POST /v1/users/{id}/grants`): then `product_id` and
        /// `original_transaction_id` are empty and `expires_at` is the grant's end.
        package var grantID: String?

        package init(
            entitlement: String, productID: String, status: String, expiresAt: String?, originalTransactionID: String,
            grantID: String? = nil
        ) {
            self.entitlement = entitlement
            self.productID = productID
            self.status = status
            self.expiresAt = expiresAt
            self.originalTransactionID = originalTransactionID
            self.grantID = grantID
        }

        enum CodingKeys: String, CodingKey {
            case entitlement, status
            case grantID = "grant_id"
            case productID = "product_id"
            case expiresAt = "expires_at"
            case originalTransactionID = "original_transaction_id"
        }
    }

    enum CodingKeys: String, CodingKey {
        case entitlements
        case userID = "user_id"
        case asOf = "as_of"
    }

    package func encoded() -> Data {
        canonicalJSON(self)
    }
}

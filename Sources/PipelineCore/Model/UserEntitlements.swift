import Foundation

/// What a user is entitled to now: `GET /v1/users/{user_id}/entitlements`.
public struct UserEntitlements: Codable, Sendable, Equatable {
    public var userID: String
    public var entitlements: [Entitlement]
    /// When it was read (ISO 8601): the answer is true as of then.
    public var asOf: String

    package init(userID: String, entitlements: [Entitlement], asOf: String) {
        self.userID = userID
        self.entitlements = entitlements
        self.asOf = asOf
    }

    public struct Entitlement: Codable, Sendable, Equatable {
        public var entitlement: String
        public var productID: String
        /// `active`, or `grace_period` (Apple is retrying the payment and the user keeps access).
        public var status: String
        /// A subscription's end (ISO 8601); a non-consumable's entitlements have none.
        public var expiresAt: String?
        public var originalTransactionID: String

        public init(entitlement: String, productID: String, status: String, expiresAt: String?, originalTransactionID: String) {
            self.entitlement = entitlement
            self.productID = productID
            self.status = status
            self.expiresAt = expiresAt
            self.originalTransactionID = originalTransactionID
        }

        enum CodingKeys: String, CodingKey {
            case entitlement, status
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

    public func encoded() -> Data {
        canonicalJSON(self)
    }
}

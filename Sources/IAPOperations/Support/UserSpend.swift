import Foundation
import PipelineCore
import RedisClient

/// What a user spent since a moment, per currency, from the purchases Apple priced (a signed
/// transaction's `price`; a legacy receipt says none, so it counts nothing) that the user holds:
/// what a game reads before it sells, to hold a monthly cap. Amounts are Apple's milliunits
/// (`4990` is 4.99).
package struct UserSpend: Codable, Sendable, Equatable {
    package var userID: String
    /// ISO 8601, UTC.
    package var since: String
    package var currencies: [String: Amounts]

    package struct Amounts: Codable, Sendable, Equatable {
        /// What the purchases made since then cost (`price` x `quantity`).
        package var spent: Int64 = 0
        /// What Apple refunded of them (in whole, or the items a refund in part took back).
        package var refunded: Int64 = 0
        /// `spent` less `refunded`.
        package var net: Int64 = 0
        package var purchases: Int = 0
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case since, currencies
    }
}

extension PipelineStore {
    /// The user's spend since `since` (ms): every bucket's index of the user's purchases in one
    /// round trip, then the grant records of those bought since, 500 a round trip.
    package func spend(of user: String, since: Int64) async throws -> UserSpend {
        var answer = UserSpend(userID: user, since: Self.iso8601(ms: since), currencies: [:])
        let fields = ["price", "currency", "quantity", "revoked_quantity", "revoked_at", "user_id"]
        for values in try await grantRecords(of: user, since: since, fields: fields) {
            // Priced, and the user's still (a purchase transferred away is the new holder's spend).
            guard let price = values[0].flatMap({ Int64($0) }), let currency = values[1], values[5] == user else { continue }
            let quantity = values[2].flatMap { Int64($0) } ?? 1
            let revoked = Self.revokedUnits(quantity: quantity, revokedQuantity: values[3], revokedAt: values[4])
            var amounts = answer.currencies[currency] ?? .init()
            amounts.spent += price * quantity
            amounts.refunded += price * revoked
            amounts.net = amounts.spent - amounts.refunded
            amounts.purchases += 1
            answer.currencies[currency] = amounts
        }
        return answer
    }

    static func iso8601(ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
    }
}

import AppleJWS
import PlainJSON

/// What Apple said it took back (`revoke_grant`'s arguments): its reason and type, and for a
/// partial refund (`REFUND_PRORATED`, Notifications 2.20) the percentage in milliunits (100000 is
/// all of it; for a quantity above 1 it applies to the whole quantity: 1 of 3 is about 33333).
/// Only a consumable can be owned in part (`prorate`): a non-consumable or a subscription's period
/// refunded in part ends as on a refund in whole.
package struct Revocation: Sendable, Equatable {
    package var reason: String
    package var type: String
    package var percentage: Int?
    package var prorate: Bool

    package init(reason: String, type: String, percentage: Int? = nil, prorate: Bool = false) {
        self.reason = reason
        self.type = type
        self.percentage = percentage
        self.prorate = prorate
    }

    /// Apple's transaction as a notification (or the refund history) carries it; `consumable`:
    /// the catalog's type of its product.
    package init(_ transaction: JWSTransaction, notificationType: String, consumable: Bool) {
        let type = transaction.revocationType ?? notificationType
        let percentage = transaction.revocationPercentage.map { min(max($0, 0), 100_000) }
        self.init(
            reason: transaction.revocationReason.map(String.init) ?? "", type: type, percentage: percentage,
            prorate: consumable && type == "REFUND_PRORATED" && percentage != nil)
    }

    var json: JSONObject {
        var members: JSONObject = ["revocation_reason": .string(reason), "revocation_type": .string(type)]
        if let percentage { members["revocation_percentage"] = .number(String(percentage)) }
        if prorate { members["prorate"] = .bool(true) }
        return members
    }
}

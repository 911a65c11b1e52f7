import PipelineCore
import PlainJSON
import RedisClient

/// `force_recheck`: a subscription's re-check due now, its tries from zero.
package struct ForceRecheck: PipelineScript {
    package static let script = LuaSource.script("force_recheck")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, originalTransactionID: String, now: Int64) {
        self.keys = [
            keys.ofPurchase(originalTransactionID: originalTransactionID).rechecks,
            keys.subscription(originalTransactionID: originalTransactionID),
        ]
        arguments = [JSONValue.object([
            "original_transaction_id": .string(originalTransactionID), "now": .string(String(now)),
        ]).canonicalText]
    }

    /// `false` when no subscription has this original transaction id.
    package static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}

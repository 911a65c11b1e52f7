import PlainJSON
import RedisClient

/// `force_recheck`: a subscription's re-check due now, its tries from zero.
struct ForceRecheck: PipelineScript {
    static let script = LuaSource.script("force_recheck", PackageResources.force_recheck_lua)
    let keys: [String]
    let arguments: [String]

    init(_ keys: RedisKeys, originalTransactionID: String, now: Int64) {
        self.keys = [
            keys.ofPurchase(originalTransactionID: originalTransactionID).rechecks,
            keys.subscription(originalTransactionID: originalTransactionID),
        ]
        arguments = [JSONValue.object([
            "original_transaction_id": .string(originalTransactionID), "now": .string(String(now)),
        ]).canonicalText]
    }

    /// `false` when no subscription has this original transaction id.
    static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}

import IAPStages
import PipelineCore
import PlainJSON
import RedisClient

/// `record_retention_answer`: the answer to one of Apple's real-time retention requests, once by
/// its `requestIdentifier` (a `retention_offered` entry for the owner, counted; the subscription
/// record keeps the latest answer).
package struct RecordRetentionAnswer: PipelineScript {
    package static let script = LuaSource.script("record_retention_answer")
    package let keys: [String]
    package let arguments: [String]

    /// `event`: the entry's fields but `user_id` (`event` and `retention_rule` among them);
    /// `offer`: the offer id or alternate product the record keeps ('' for the message alone).
    package init(
        _ keys: RedisKeys, originalTransactionID: String, requestID: String, user: String, event: JSONObject, offer: String,
        now: Int64, kept: Duration = RedisKeys.retentionRequestKept
    ) {
        let bucket = keys.ofPurchase(originalTransactionID: originalTransactionID)
        self.keys = [
            keys.retentionRequest(originalTransactionID: originalTransactionID, requestID: requestID), bucket.fulfilment,
            bucket.userEvents, bucket.figures(day: FigureDay(milliseconds: now)),
            keys.subscription(originalTransactionID: originalTransactionID),
        ]
        arguments = [JSONValue.object([
            "now": .string(String(now)), "ttl": .string(String(kept.components.seconds * 1000)), "user": .string(user),
            "event": .object(event), "offer": .string(offer),
        ]).canonicalText]
    }

    /// `true` when recorded now, `false` when the request was answered before (a replay).
    package static func decode(_ reply: RedisReply) throws -> Bool {
        guard let code = reply.int, code == 0 || code == 1 else { throw ScriptReplyError(script: name, reply: reply) }
        return code == 1
    }
}

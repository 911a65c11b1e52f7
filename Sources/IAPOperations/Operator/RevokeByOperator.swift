import IAPStages
import PipelineCore
import PlainJSON
import RedisClient

/// `revoke_by_operator`: a grant taken back by hand, once.
package struct RevokeByOperator: PipelineScript {
    package static let script = LuaSource.script("revoke_by_operator")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, unit: String, originalTransactionID original: String, by operatorName: String, note: String, now: Int64) {
        let bucket = keys.ofPurchase(originalTransactionID: original)
        self.keys = [keys.grant(unit: unit, originalTransactionID: original), bucket.fulfilment, bucket.userEvents]
        arguments = [JSONValue.object([
            "now": .string(String(now)), "operator": .string(operatorName), "note": .string(note),
        ]).canonicalText]
    }

    /// `revoked`, `already_revoked`, or `nil` when nothing is granted under the unit.
    package static func decode(_ reply: RedisReply) throws -> String? {
        guard let items = reply.array, let code = items.first?.int else { throw ScriptReplyError(script: name, reply: reply) }
        switch (code, items.count > 1 ? items[1].string : nil) {
        case (1, "revoked"?), (0, "already_revoked"?): return items[1].string
        case (-1, nil): return nil
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}

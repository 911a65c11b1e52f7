import PipelineCore
import PlainJSON
import RedisClient

/// `record_consumption`: a user's consumption fact about one purchase, at most `max` a user (the
/// one recorded longest ago makes room).
package struct RecordConsumption: PipelineScript {
    package static let script = LuaSource.script("record_consumption")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, user: String, transactionID: String, fact: JSONValue, max: Int) {
        self.keys = [keys.consumption(user: user)]
        arguments = [JSONValue.object([
            "transaction_id": .string(transactionID), "fact": .string(fact.canonicalText), "max": .string(String(max)),
        ]).canonicalText]
    }

    /// The transaction id whose fact was dropped, if one was.
    package static func decode(_ reply: RedisReply) throws -> String? {
        guard let dropped = reply.string else { throw ScriptReplyError(script: name, reply: reply) }
        return dropped.isEmpty ? nil : dropped
    }
}

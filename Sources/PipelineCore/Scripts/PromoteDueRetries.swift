import PlainJSON
import RedisClient

/// `promote_due_retries`: retries due by Redis's clock back onto their stages' queues.
package struct PromoteDueRetries: PipelineScript {
    package static let script = LuaSource.script("promote_due_retries")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, now: Int64?, limit: Int) {
        self.keys = [keys.retry, keys.dead] + Stage.allCases.map(keys.queue)
        arguments = [JSONValue.object(["now": pinnedNow(now), "limit": .string(String(limit))]).canonicalText]
    }

    /// How many entries were moved.
    package static func decode(_ reply: RedisReply) throws -> Int {
        guard let count = reply.int else { throw ScriptReplyError(script: name, reply: reply) }
        return Int(count)
    }
}

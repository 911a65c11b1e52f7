import PlainJSON
import RedisClient

/// `promote_due_retries`: retries due by Redis's clock back onto their stages' queues.
struct PromoteDueRetries: PipelineScript {
    static let script = LuaSource.script("promote_due_retries", PackageResources.promote_due_retries_lua)
    let keys: [String]
    let arguments: [String]

    init(_ keys: RedisKeys, now: Int64?, limit: Int) {
        self.keys = [keys.retry, keys.dead] + Stage.allCases.map(keys.queue)
        arguments = [JSONValue.object(["now": pinnedNow(now), "limit": .string(String(limit))]).canonicalText]
    }

    /// How many entries were moved.
    static func decode(_ reply: RedisReply) throws -> Int {
        guard let count = reply.int else { throw ScriptReplyError(script: name, reply: reply) }
        return Int(count)
    }
}

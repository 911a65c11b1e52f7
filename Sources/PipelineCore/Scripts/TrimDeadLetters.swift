import PlainJSON
import RedisClient

/// `trim_dead_letters`: a bucket's dead letters kept to the newest `max`, none older than
/// `maxAge`; the dropped ones returned, oldest first.
package struct TrimDeadLetters: PipelineScript {
    package static let script = LuaSource.script("trim_dead_letters")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, max: Int, maxAge: Duration, limit: Int, now: Int64?) {
        self.keys = [keys.dead]
        arguments = [JSONValue.object([
            "max": .string(String(max)), "max_age_ms": .string(String(maxAge.milliseconds)), "limit": .string(String(limit)),
            "now": pinnedNow(now),
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> [String] {
        guard let items = reply.array else { throw ScriptReplyError(script: name, reply: reply) }
        return items.compactMap(\.string)
    }
}

import PlainJSON
import RedisClient

/// `record_heartbeat`: a worker's heartbeat at Redis's time.
package struct RecordHeartbeat: PipelineScript {
    package static let script = LuaSource.script("record_heartbeat")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, member: String, now: Int64?) {
        self.keys = [keys.workers]
        arguments = [JSONValue.object(["member": .string(member), "now": pinnedNow(now)]).canonicalText]
    }

    /// The time recorded, Redis's milliseconds.
    package static func decode(_ reply: RedisReply) throws -> Int64 {
        guard let now = reply.int else { throw ScriptReplyError(script: name, reply: reply) }
        return now
    }
}

/// A test's fixed now for a script that otherwise reads Redis's clock (`redis_now`); `null`
/// (Redis's TIME) in every call the pipeline makes.
package func pinnedNow(_ now: Int64?) -> JSONValue {
    now.map { .string(String($0)) } ?? .null
}

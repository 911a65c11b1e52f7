import PlainJSON
import RedisClient

/// `record_heartbeat`: a worker's heartbeat at Redis's time.
struct RecordHeartbeat: PipelineScript {
    static let script = LuaSource.script("record_heartbeat", PackageResources.record_heartbeat_lua)
    let keys: [String]
    let arguments: [String]

    init(_ keys: RedisKeys, member: String, now: Int64?) {
        self.keys = [keys.workers]
        arguments = [JSONValue.object(["member": .string(member), "now": pinnedNow(now)]).canonicalText]
    }

    /// The time recorded, Redis's milliseconds.
    static func decode(_ reply: RedisReply) throws -> Int64 {
        guard let now = reply.int else { throw ScriptReplyError(script: name, reply: reply) }
        return now
    }
}

/// A test's fixed now for a script that otherwise reads Redis's clock (`redis_now`); `null`
/// (Redis's TIME) in every call the pipeline makes.
func pinnedNow(_ now: Int64?) -> JSONValue {
    now.map { .string(String($0)) } ?? .null
}

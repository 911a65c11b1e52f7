import PlainJSON
import RedisClient

/// `requeue_inflight`: a stopping worker's unfinished jobs back to the front of its queue.
struct RequeueInflight: PipelineScript {
    static let script = LuaSource.script("requeue_inflight", PackageResources.requeue_inflight_lua)
    let keys: [String]
    let arguments: [String]

    init(_ keys: RedisKeys, member: String, stage: Stage) {
        self.keys = [keys.inflight(member: member), keys.queue(stage), keys.workers]
        arguments = [JSONValue.object(["member": .string(member)]).canonicalText]
    }

    /// How many jobs went back.
    static func decode(_ reply: RedisReply) throws -> Int {
        guard let count = reply.int else { throw ScriptReplyError(script: name, reply: reply) }
        return Int(count)
    }
}

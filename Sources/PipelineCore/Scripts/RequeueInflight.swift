import PlainJSON
import RedisClient

/// `requeue_inflight`: a stopping worker's unfinished jobs back to the front of its queue.
package struct RequeueInflight: PipelineScript {
    package static let script = LuaSource.script("requeue_inflight")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, member: String, stage: Stage) {
        self.keys = [keys.inflight(member: member), keys.queue(stage), keys.workers]
        arguments = [JSONValue.object(["member": .string(member)]).canonicalText]
    }

    /// How many jobs went back.
    package static func decode(_ reply: RedisReply) throws -> Int {
        guard let count = reply.int else { throw ScriptReplyError(script: name, reply: reply) }
        return Int(count)
    }
}

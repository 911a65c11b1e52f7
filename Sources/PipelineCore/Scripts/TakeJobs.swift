import PlainJSON
import RedisClient

/// `take_jobs`: up to `max` jobs from a stage's queue into a worker's in-flight list, without blocking.
package struct TakeJobs: PipelineScript {
    package static let script = LuaSource.script("take_jobs")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, stage: Stage, member: String, max: Int) {
        self.keys = [keys.queue(stage), keys.inflight(member: member)]
        arguments = [JSONValue.object(["max": .string(String(max))]).canonicalText]
    }

    /// The jobs taken, oldest first.
    package static func decode(_ reply: RedisReply) throws -> [String] {
        guard let items = reply.array else { throw ScriptReplyError(script: name, reply: reply) }
        return items.compactMap(\.string)
    }
}

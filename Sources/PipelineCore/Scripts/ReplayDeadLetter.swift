import PlainJSON
import RedisClient

/// `replay_dead_letter`: a dead letter's job queued again, attempts reset, by one caller only.
package struct ReplayDeadLetter: PipelineScript {
    package static let script = LuaSource.script("replay_dead_letter")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, entry: String, job: Job, ttl: Duration, now: Int64) {
        self.keys = [keys.dead, keys.queue(job.stage), keys.ticket(job.ownTicket)]
        arguments = [entry, JSONValue.object([
            "job": .string(job.encoded()), "now": .string(String(now)), "channel": .string(keys.results),
            "ticket": .string(job.ownTicket), "ttl": .string(String(ttl.components.seconds)),
        ]).canonicalText]
    }

    /// `false` when the entry is no longer there.
    package static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}

import PipelineCore
import PlainJSON
import RedisClient

/// `finish_webhook_event`: a delivery ended; the user's job goes on to their next event or ends.
package struct FinishWebhookEvent: PipelineScript {
    package static let script = LuaSource.script("finish_webhook_event")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, member: String, taken: String, job: Job, eventID: String, deadEntry: String?, now: Int64) {
        var next = job
        next.attempts = 0
        next.enqueuedAt = now
        self.keys = [
            keys.inflight(member: member), keys.webhookEvents(user: job.userID, to: job.webhookDestination),
            keys.webhookBusy(to: job.webhookDestination), keys.queue(.webhook),
            keys.ticket(job.ticket), keys.dead,
        ]
        arguments = [taken, JSONValue.members([
            "user": .string(job.userID), "event_id": .string(eventID), "next": .string(next.encoded()), "now": .string(String(now)),
            "replay": job.replayedWebhookEvent != nil ? .bool(true) : nil, "dead_entry": deadEntry.json,
            "ttl": .string(String(RedisKeys.webhookTicketTTL.components.seconds)),
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> TransitionResult { try TransitionResult(reply, script: name) }
}

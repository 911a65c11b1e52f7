import PlainJSON
import RedisClient

/// `schedule_retry`: a job parked in the retry set for `delay` from Redis's now; its ticket `retrying`.
package struct ScheduleRetry: PipelineScript {
    package static let script = LuaSource.script("schedule_retry")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, member: String, taken: String, next: Job, delay: Duration, lastError: String, now: Int64?) {
        self.keys = [keys.inflight(member: member), keys.retry, keys.ticket(next.ownTicket)]
        arguments = [taken, JSONValue.object([
            "next": .string(next.encoded()), "delay_ms": .string(String(delay.milliseconds)), "now": pinnedNow(now),
            "attempts": .string(String(next.attempts)), "last_error": .string(lastError), "channel": .string(keys.results),
            "ticket": .string(next.ownTicket),
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> TransitionResult { try TransitionResult(reply, script: name) }
}

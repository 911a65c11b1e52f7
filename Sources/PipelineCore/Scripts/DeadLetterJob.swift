import PlainJSON
import RedisClient

/// `dead_letter_job`: a job moved to the dead letters; its ticket (if any) `dead`.
package struct DeadLetterJob: PipelineScript {
    package static let script = LuaSource.script("dead_letter_job")
    package let keys: [String]
    package let arguments: [String]

    /// `ticket` is `nil` for a job that could not be decoded; a ticket in another bucket (a job
    /// that is none of ours) is not touched.
    package init(_ keys: RedisKeys, member: String, taken: String, entry: DeadLetter, ticket: String?, lastError: String) {
        self.keys = [keys.inflight(member: member), keys.dead] + (ticket.flatMap(keys.ticketInThisBucket).map { [$0] } ?? [])
        arguments = [taken, JSONValue.object([
            "entry": .string(entry.encoded()), "reason": .string(entry.reason), "attempts": .string(String(entry.attempts)),
            "now": .string(String(entry.at)), "channel": .string(keys.results), "ticket": .string(ticket ?? ""),
            "last_error": .string(lastError),
        ]).canonicalText]
    }

    /// `moved`, or `leaseLost` (never `ticketMissing`: a job without a ticket is dead-lettered too).
    package static func decode(_ reply: RedisReply) throws -> TransitionResult {
        let result = try TransitionResult(reply, script: name)
        guard result != .ticketMissing else { throw ScriptReplyError(script: name, reply: reply) }
        return result
    }
}

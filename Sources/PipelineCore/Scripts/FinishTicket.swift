import PlainJSON
import RedisClient

/// `finish_ticket`: a job acked and its ticket given a terminal status without a grant.
package struct FinishTicket: PipelineScript {
    package static let script = LuaSource.script("finish_ticket")
    package let keys: [String]
    package let arguments: [String]

    package init(
        _ keys: RedisKeys, member: String, taken: String, ticket: String, status: TicketStatus, reason: String, attempts: Int,
        environment: String?, lastError: String?, result: String? = nil, transactions: String? = nil, now: Int64
    ) {
        self.keys = [keys.inflight(member: member), keys.ticket(ticket)]
        arguments = [taken, JSONValue.members([
            "status": .string(status.rawValue), "reason": .string(reason), "attempts": .string(String(attempts)),
            "now": .string(String(now)), "channel": .string(keys.results), "ticket": .string(ticket),
            "environment": environment.json, "last_error": lastError.json, "result": result.json,
            "transactions": transactions.json,
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> TransitionResult { try TransitionResult(reply, script: name) }
}

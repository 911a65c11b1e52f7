import PipelineCore
import PlainJSON
import RedisClient

/// `finish_part`: a part's outcome recorded on the client's ticket, which takes its final status
/// once every part has reported.
package struct FinishPart: PipelineScript {
    package static let script = LuaSource.script("finish_part")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, ticket: String, part: String, outcome: PartOutcome, now: Int64) {
        self.keys = [keys.ticket(ticket)]
        arguments = [JSONValue.object([
            "part": .string(part), "outcome": .string(outcome.json.canonicalText), "ticket": .string(ticket),
            "now": .string(String(now)), "channel": .string(keys.results(ofTicket: ticket)),
        ]).canonicalText]
    }

    /// `true` recorded, `false` the ticket is gone.
    package static func decode(_ reply: RedisReply) throws -> Bool {
        switch reply.int {
        case 1: return true
        case -1: return false
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}

/// What one part of a ticket came to: its status (as `grant_purchases` set it on the part), its
/// purchases' lines (JSON array text) and, when rejected, why.
package struct PartOutcome: Sendable, Equatable {
    package var status: TicketStatus
    package var transactions: String
    package var reason: String?
    package var environment: String?

    package init(status: TicketStatus, transactions: String, reason: String?, environment: String?) {
        self.status = status
        self.transactions = transactions
        self.reason = reason
        self.environment = environment
    }

    var json: JSONValue {
        .members([
            "status": .string(status.rawValue),
            "transactions": (try? JSONValue(parsing: transactions)) ?? .array([]),
            "reason": reason.flatMap { $0.isEmpty ? nil : $0 }.json,
            "environment": environment.flatMap { $0.isEmpty ? nil : $0 }.json,
        ])
    }
}

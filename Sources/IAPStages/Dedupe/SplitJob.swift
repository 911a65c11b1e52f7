import PipelineCore
import PlainJSON
import RedisClient

/// `split_job`: the dedupe job of a receipt split into parts acked, its parts named on the
/// client's ticket (which is final here when every part reported already).
package struct SplitJob: PipelineScript {
    package static let script = LuaSource.script("split_job")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, member: String, taken: String, ticket: String, parts: [String], now: Int64) {
        self.keys = [keys.inflight(member: member), keys.ticket(ticket)]
        arguments = [taken, JSONValue.object([
            "parts": .array(parts.map(JSONValue.string)), "ticket": .string(ticket), "now": .string(String(now)),
            "channel": .string(keys.results(ofTicket: ticket)),
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> TransitionResult { try TransitionResult(reply, script: name) }
}

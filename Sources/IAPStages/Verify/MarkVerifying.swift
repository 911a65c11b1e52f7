import PipelineCore
import PlainJSON
import RedisClient

/// `mark_verifying`: `verifying` on the tickets of jobs the verify stage took.
package struct MarkVerifying: PipelineScript {
    package static let script = LuaSource.script("mark_verifying")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, tickets: [String], now: Int64) {
        self.keys = tickets.map(keys.ticket)
        arguments = [JSONValue.object([
            "now": .string(String(now)), "channel": .string(keys.results), "tickets": .array(tickets.map(JSONValue.string)),
        ]).canonicalText]
    }

    /// Per ticket, whether its hash exists.
    package static func decode(_ reply: RedisReply) throws -> [Bool] {
        guard let items = reply.array else { throw ScriptReplyError(script: name, reply: reply) }
        return try items.map { item in
            switch item.int {
            case 1: return true
            case -1: return false
            default: throw ScriptReplyError(script: name, reply: reply)
            }
        }
    }
}

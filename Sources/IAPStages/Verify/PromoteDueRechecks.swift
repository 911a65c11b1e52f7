import PipelineCore
import PlainJSON
import RedisClient

/// `promote_due_rechecks`: due re-checks become re-check jobs on the verify queue, at most
/// `limit` a call. The records of the due subscriptions, then their tickets (whose ids hold the
/// try each record counts), are declared as the script names them.
package struct PromoteDueRechecks: DeclaringScript {
    package static let script = LuaSource.script("promote_due_rechecks")
    private let redisKeys: RedisKeys
    private let now: Int64
    private var declared: DeclaredKeys
    private var members: JSONObject
    private var records: JSONObject = [:]
    private var tickets: JSONObject = [:]
    package private(set) var arguments: [String]
    package var keys: [String] { declared.list }

    package init(_ keys: RedisKeys, schedule: RecheckSchedule, ticketTTL: Duration, limit: Int, now: Int64) {
        redisKeys = keys
        self.now = now
        declared = DeclaredKeys([keys.rechecks, keys.queue(.verify)])
        members = [
            "now": .string(String(now)), "limit": .string(String(limit)), "ttl": .string(String(ticketTTL.components.seconds)),
            "recheck": schedule.json, "ticket_prefix": .string(keys.layout.ticketID("", inBucket: keys.bucket)),
        ]
        arguments = [JSONValue.object(members).canonicalText]
    }

    /// The ticket of a subscription's re-check: `recheck-<original>-<now>-<try>`, naming the
    /// bucket of `keys` when there are several (`<bucket>.recheck-…`).
    package static func ticket(original: String, now: Int64, try attempt: Int, in keys: RedisKeys = RedisKeys()) -> String {
        keys.layout.ticketID("recheck-\(original)-\(now)-\(attempt)", inBucket: keys.bucket)
    }

    package mutating func declare(_ needed: RedisReply) throws {
        let named = try needed.json(script: Self.name)
        for original in named["records"]?.array ?? [] {
            guard let original = original.string else { throw ScriptReplyError(script: Self.name, reply: needed) }
            records[original] = .int(declared.index(of: redisKeys.subscription(originalTransactionID: original)))
        }
        for ticket in named["tickets"]?.array ?? [] {
            guard let original = ticket["original"]?.string, let attempt = ticket["try"]?.int else {
                throw ScriptReplyError(script: Self.name, reply: needed)
            }
            let id = Self.ticket(original: original, now: now, try: attempt, in: redisKeys)
            tickets[original] = .object(["index": .int(declared.index(of: redisKeys.ticket(id))), "try": .int(attempt)])
        }
        members["records"] = .object(records)
        members["tickets"] = .object(tickets)
        arguments = [JSONValue.object(members).canonicalText]
    }

    /// How many jobs were queued.
    package static func decode(_ reply: RedisReply) throws -> Int {
        guard let count = reply.int, count >= 0 else { throw ScriptReplyError(script: name, reply: reply) }
        return Int(count)
    }
}

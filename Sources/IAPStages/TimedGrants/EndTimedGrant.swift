import PipelineCore
import PlainJSON
import RedisClient

/// `end_timed_grant`: a grant for a time ends once, at its end or taken back before it.
package struct EndTimedGrant: PipelineScript {
    package static let script = LuaSource.script("end_timed_grant")
    package let keys: [String]
    package let arguments: [String]

    /// Why it ends: its end came, or it was taken back.
    package enum Why: String, Sendable {
        case expired, revoked
    }

    package init(_ keys: RedisKeys, user: String, grantID: String, why: Why, by: String = "", now: Int64) {
        let bucket = keys.ofTimedGrants(user: user)
        self.keys = [bucket.timedGrants(user: user), bucket.timedGrantEnds, bucket.fulfilment, bucket.userEvents]
        arguments = [JSONValue.object([
            "user": .string(user), "grant_id": .string(grantID), "now": .string(String(now)), "why": .string(why.rawValue),
            "by": .string(by),
        ]).canonicalText]
    }

    package enum Outcome: Sendable, Equatable {
        case ended(TimedGrant)
        /// Ended before, or (its end asked for) not due yet.
        case unchanged(TimedGrant)
        case notFound
    }

    package static func decode(_ reply: RedisReply) throws -> Outcome {
        guard let items = reply.array, items.count == 2, let code = items[0].int, let text = items[1].string else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        switch code {
        case 1: return .ended(try TimedGrant(record: text))
        case 0: return .unchanged(try TimedGrant(record: text))
        case -1: return .notFound
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}

import PipelineCore
import PlainJSON
import RedisClient

/// `grant_for_a_time`: an entitlement given to a user until a moment, once per grant id.
package struct GrantForATime: PipelineScript {
    package static let script = LuaSource.script("grant_for_a_time")
    package let keys: [String]
    package let arguments: [String]

    /// `exactUntil`: the order named the end as a moment (an order again must name the same);
    /// `false`, as a duration from now.
    package init(_ keys: RedisKeys, user: String, grant: TimedGrant, exactUntil: Bool) {
        let bucket = keys.ofTimedGrants(user: user)
        self.keys = [bucket.timedGrants(user: user), bucket.timedGrantEnds, bucket.fulfilment, bucket.userEvents]
        arguments = [JSONValue.object([
            "user": .string(user), "grant_id": .string(grant.grantID), "entitlement": .string(grant.entitlement),
            "until": .string(String(grant.until)), "exact_until": .string(exactUntil ? "1" : "0"), "reason": .string(grant.reason), "source": .string(grant.source),
            "by": .string(grant.by), "now": .string(String(grant.grantedAt)),
        ]).canonicalText]
    }

    /// What became of the grant: made now, made before (the same), or the id names another.
    package enum Outcome: Sendable, Equatable {
        case granted(TimedGrant)
        case seenBefore(TimedGrant)
        case idTaken(TimedGrant)
    }

    package static func decode(_ reply: RedisReply) throws -> Outcome {
        guard let items = reply.array, items.count == 2, let code = items[0].int, let text = items[1].string else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        let grant = try TimedGrant(record: text)
        switch code {
        case 1: return .granted(grant)
        case 0: return .seenBefore(grant)
        case -1: return .idTaken(grant)
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}

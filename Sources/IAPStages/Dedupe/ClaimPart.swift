import PipelineCore
import PlainJSON
import RedisClient

/// `claim_part`: one part of a receipt whose purchases lie in several buckets, on its bucket: its
/// own ticket hash, its grant units claimed for the client's ticket, its grant job queued, once.
package struct ClaimPart: PipelineScript {
    package static let script = LuaSource.script("claim_part")
    package let keys: [String]
    package let arguments: [String]

    /// `keys`: the part's bucket's; `part`: the part's grant job (`part` set).
    package init(_ keys: RedisKeys, part: Job, ttl: Duration, now: Int64) {
        precondition(part.part != nil, "a part's job names its part")
        let claims = part.grantWork.purchases.filter(\.isClaimed).compactMap { purchase in
            purchase.unit.map { keys.claim(unit: $0, originalTransactionID: purchase.originalTransactionID) }
        }
        self.keys = [keys.ticket(part.ownTicket), keys.queue(.grant)] + claims
        arguments = [JSONValue.object([
            "job": .string(part.encoded()), "ticket": .string(part.ticket), "user_id": .string(part.userID),
            "now": .string(String(now)), "ttl_ms": .string(String(ttl.milliseconds)),
        ]).canonicalText]
    }

    /// Whether this call queued the part (`false`: an earlier call did).
    package static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}

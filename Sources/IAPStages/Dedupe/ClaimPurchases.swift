import PipelineCore
import RedisClient

/// `claim_purchases`: each dedupe job's grant units claimed for its ticket, the job forwarded to grant.
package struct ClaimPurchases: PipelineScript {
    package static let script = LuaSource.script("claim_purchases")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, member: String, jobs: [(payload: String, next: Job)]) {
        var list = [keys.inflight(member: member), keys.queue(.grant)]
        // The jobs go as they are, four arguments each: inside one JSON document they were
        // escaped here and unescaped by Redis, about a seventh of a deduper's instructions.
        var arguments: [String] = []
        for job in jobs {
            let claims = job.next.grantWork.purchases.filter(\.isClaimed).compactMap { purchase in
                purchase.unit.map { keys.claim(unit: $0, originalTransactionID: purchase.originalTransactionID) }
            }
            list += [keys.ticket(job.next.ticket)] + claims
            arguments += [job.payload, job.next.encoded(), job.next.ticket, String(claims.count)]
        }
        self.keys = list
        self.arguments = arguments
    }

    package static func decode(_ reply: RedisReply) throws -> [TransitionResult] { try TransitionResult.each(of: reply, script: name) }
}

import PipelineCore
import PlainJSON
import RedisClient

/// `claim_purchases`: each dedupe job's grant units claimed for its ticket, the job forwarded to grant.
package struct ClaimPurchases: PipelineScript {
    package static let script = LuaSource.script("claim_purchases")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, member: String, jobs: [(payload: String, next: Job)]) {
        var list = [keys.inflight(member: member), keys.queue(.grant)]
        var entries: [JSONValue] = []
        for job in jobs {
            let claims = job.next.grantWork.purchases.filter(\.isClaimed).compactMap { purchase in
                purchase.unit.map { keys.claim(unit: $0, originalTransactionID: purchase.originalTransactionID) }
            }
            list += [keys.ticket(job.next.ticket)] + claims
            entries.append(.object([
                "taken": .string(job.payload), "next": .string(job.next.encoded()), "ticket": .string(job.next.ticket),
                "units": .string(String(claims.count)),
            ]))
        }
        self.keys = list
        arguments = [JSONValue.object(["jobs": .array(entries)]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> [TransitionResult] { try TransitionResult.each(of: reply, script: name) }
}

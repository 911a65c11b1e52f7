import Crypto
import Foundation
import PipelineCore
import PlainJSON

extension PipelineStore {
    /// `iapctl user sync`: a sync of one Apple Account for a user, as `POST /v1/users/{id}/sync`
    /// does at login but named by the operator (no signed app transaction): the verify stage reads
    /// the account's history in `environment` and every purchase the books do not know is granted
    /// to the user (source `sync`). The same user and account within a minute get the same
    /// ticket. Returns the ticket id and whether it is new.
    package func submitSync(
        user: String, appleAccount: String, environment: String, bundleID: String? = nil, ttl: Duration, now: Int64 = currentTimeMs()
    ) async throws -> (ticket: String, created: Bool) {
        var job = Job(
            ticket: TicketID.make(), stage: .verify, userID: user,
            work: .verify(Job.ToVerify(evidence: .accountSync(appleAccount, environment: environment))), source: Job.syncSource,
            enqueuedAt: now)
        job.bundleID = bundleID
        var hasher = SHA256()
        for part in [user, "operator-sync", String(now / 60_000), environment, appleAccount] {
            hasher.update(data: Array(part.utf8) + [0])
        }
        return try await submit(job, receiptDigest: Hex.encode(hasher.finalize()), ttl: ttl)
    }
}

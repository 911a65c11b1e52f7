import AppleJWS
import Crypto
import Foundation
import Hummingbird
import PipelineCore
import PlainJSON

extension IntakeRoutes {
    /// `POST /v1/users/{user_id}/sync` with `{"signed_app_transaction": JWS}` (the app's
    /// `AppTransaction`, sent at login): the Apple Account is seated on the user as a
    /// `signed_app_transaction` submission seats it, then every purchase Apple has of that
    /// account (Get Transaction History by its `appTransactionId`) that the books do not know is
    /// granted to the user (source `sync`); the ones they know are left alone. `202` with a
    /// ticket; the same user's same app transaction within one sync window gets the same ticket.
    /// `"dry_run": true`: what the sync would grant, adopt, hold or leave alone, on the ticket
    /// (`applied`, result `dry_run`), nothing written (`Job.dryRun`).
    func sync(_ request: Request, context: IntakeRequestContext) async throws -> Response {
        let user = try NotificationRoutes.user(context)
        guard serverAPIConfigured else {
            throw IntakeError(
                .badRequest, "server_api_not_configured", "a sync needs the App Store Server API, which this deployment has not configured")
        }
        let fields = try await Self.jsonFields(request, maxBodyBytes: maxBodyBytes)
        let jws = try ReceiptSubmission.requiredString(fields, "signed_app_transaction")
        guard Base64URL.isCompactJWS(jws) else {
            throw IntakeError(.badRequest, "invalid_jws", "signed_app_transaction must be a compact JWS: three base64url segments")
        }
        var work = Job.ToVerify(evidence: .appTransaction(jws))
        switch fields["dry_run"] {
        case nil, .bool(false)?, .null?: break
        case .bool(true)?: work.dryRun = true
        default: throw IntakeError(.badRequest, "invalid_dry_run", "dry_run must be true or false")
        }
        let job = Job(
            ticket: TicketID.make(), stage: .verify, userID: user, work: .verify(work), source: Job.syncSource, enqueuedAt: currentTimeMs())
        return try await store(
            job, digest: Self.syncDigest(user: user, jws: jws, at: job.enqueuedAt, dryRun: work.dryRun), context: context)
    }

    /// How long a sync's ticket answers a resend of the same app transaction; a sync sent after
    /// its window reads Apple again (and grants nothing twice).
    static let syncWindowMs: Int64 = 60_000

    /// One user's one app transaction in one sync window: its own digest, apart from any submission's.
    /// A dry run's is its own too: it never answers a sync, nor a sync it.
    static func syncDigest(user: String, jws: String, at now: Int64, dryRun: Bool = false) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(user.utf8))
        hasher.update(data: [0])
        hasher.update(data: Array((dryRun ? "sync-dry-run" : "sync").utf8) + [0] + Array(String(now / syncWindowMs).utf8) + [0] + Array(jws.utf8))
        return Hex.encode(hasher.finalize())
    }
}

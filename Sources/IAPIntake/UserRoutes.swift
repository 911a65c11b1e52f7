import Foundation
import Hummingbird
import IAPOperations
import PipelineCore

/// A user's record at once: `GET /v1/users/{user_id}[?limit=&before=]`, their purchases (paged,
/// newest first), subscriptions, refunds, Apple Accounts, consent; and
/// `GET /v1/users/{user_id}/spend?since=<ISO 8601>`, what the user spent per currency since then
/// (refunds deducted), for a game that caps spending before it sells.
package struct UserRoutes: Sendable {
    package let store: PipelineStore

    package func register(on router: Router<some RequestContext>) {
        router.get("/v1/users/{user_id}") { request, context in try await record(request, context: context) }
        router.delete("/v1/users/{user_id}") { request, context in try await erase(request, context: context) }
        router.get("/v1/users/{user_id}/spend") { request, context in try await spend(request, context: context) }
    }

    /// The largest page of purchases one request reads.
    static let largestPage = 200

    func record(_ request: Request, context: some RequestContext) async throws -> Response {
        let user = try NotificationRoutes.user(context)
        let query = request.uri.queryParameters
        var limit = 50
        if let text = query.get("limit") {
            guard let value = Int(text), (1...Self.largestPage).contains(value) else {
                throw IntakeError(.badRequest, "invalid_limit", "limit must be a whole number from 1 to \(Self.largestPage)")
            }
            limit = value
        }
        var before: Int64?
        if let text = query.get("before") {
            guard let value = Int64(text), value > 0 else {
                throw IntakeError(.badRequest, "invalid_before", "before must be the next_before of the page before (ms)")
            }
            before = value
        }
        let found: UserRecord
        do {
            if try await store.isErased(user: user) {
                throw IntakeError(.gone, "user_erased", "this user was erased; their purchases are kept under a pseudonym")
            }
            found = try await store.userRecord(of: user, limit: limit, before: before)
        } catch let error as IntakeError {
            throw error
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "Redis does not answer; try again")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: canonicalJSON(found))))
    }

    /// `DELETE /v1/users/{user_id}`: the user erased (docs/operations/erasure.md); safe to repeat.
    func erase(_ request: Request, context: some RequestContext) async throws -> Response {
        let user = try NotificationRoutes.user(context)
        let erasure: UserErasure
        do {
            erasure = try await store.erase(user: user)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "Redis does not answer; erase again (each step is safe to repeat)")
        }
        context.logger.notice("user erased", metadata: [
            "pseudonym": "\(erasure.pseudonym)", "renamed": "\(erasure.renamed)", "entries_deleted": "\(erasure.entriesDeleted)",
        ])
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: canonicalJSON(erasure))))
    }

    func spend(_ request: Request, context: some RequestContext) async throws -> Response {
        let user = try NotificationRoutes.user(context)
        let since = try Self.since(request.uri.queryParameters.get("since"))
        let found: UserSpend
        do {
            found = try await store.spend(of: user, since: since)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "Redis does not answer; try again")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(data: canonicalJSON(found))))
    }

    /// `since` as ms: an ISO 8601 date-time (`2026-11-01T00:00:00Z`, fractional seconds and
    /// offsets too) or date (`2026-11-01`, UTC).
    static func since(_ text: String?) throws(IntakeError) -> Int64 {
        guard let text, !text.isEmpty else {
            throw IntakeError(.badRequest, "invalid_since", "since is required: an ISO 8601 date-time such as 2026-11-01T00:00:00Z")
        }
        guard let date = Self.date(text) else {
            throw IntakeError(.badRequest, "invalid_since", "since must be an ISO 8601 date-time such as 2026-11-01T00:00:00Z")
        }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    private static func date(_ text: String) -> Date? {
        let styles: [Date.ISO8601FormatStyle] = [
            .iso8601, .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted),
            .iso8601.year().month().day().time(includingFractionalSeconds: true), .iso8601.year().month().day(),
        ]
        for style in styles { if let date = try? style.parse(text) { return date } }
        return nil
    }
}

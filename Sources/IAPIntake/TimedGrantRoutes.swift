import Foundation
import Hummingbird
import IAPStages
import PipelineCore
import PlainJSON

/// A user's grants for a time: `POST /v1/users/{user_id}/grants` `{grant_id, entitlement, until
/// (ISO 8601) | duration_s, reason}` gives one (once per `grant_id`: the same again answers
/// `200`, another grant under the id `409`), `DELETE /v1/users/{user_id}/grants/{grant_id}` takes
/// it back before its end, `GET /v1/users/{user_id}/grants` lists them. Scope `users`.
package struct TimedGrantRoutes: Sendable {
    package let store: PipelineStore
    /// `nil`: no catalog here to check entitlements against (503).
    package let catalog: ProductCatalog?
    package let maxBodyBytes: Int

    package func register(on router: Router<IntakeRequestContext>) {
        router.post("/v1/users/{user_id}/grants") { request, context in try await grant(request, context: context) }
        router.get("/v1/users/{user_id}/grants") { _, context in try await list(context: context) }
        router.delete("/v1/users/{user_id}/grants/{grant_id}") { _, context in try await takeBack(context: context) }
    }

    func grant(_ request: Request, context: IntakeRequestContext) async throws -> Response {
        let user = try NotificationRoutes.user(context)
        let fields = try await IntakeRoutes.jsonFields(request, maxBodyBytes: maxBodyBytes)
        let order = try Self.order(fields)
        guard let catalog else {
            throw IntakeError(.serviceUnavailable, "catalog_not_configured", "this intake has no product catalog (IAP_PRODUCTS_FILE)")
        }
        let grant: TimedGrant
        do {
            grant = try order.grant(catalog: catalog, source: "api", by: context.clientKey ?? "", now: currentTimeMs())
        } catch {
            throw IntakeError(.badRequest, error.code, error.message)
        }
        let outcome: GrantForATime.Outcome
        do {
            outcome = try await store.grantForATime(user: user, grant: grant, exactUntil: order.until != nil)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the grant could not be stored; send it again (it is made once)")
        }
        switch outcome {
        case .granted(let made):
            context.logger.info("granted for a time", metadata: ["grant_id": "\(made.grantID)", "entitlement": "\(made.entitlement)"])
            return Self.answer(.created, made)
        case .seenBefore(let made): return Self.answer(.ok, made)
        case .idTaken: throw IntakeError(.conflict, "grant_id_taken", "this grant_id names another grant of this user")
        }
    }

    func list(context: IntakeRequestContext) async throws -> Response {
        let user = try NotificationRoutes.user(context)
        let grants: [TimedGrant]
        do { grants = try await store.timedGrants(of: user) } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "Redis does not answer; try again")
        }
        return Self.respond(.ok, ["user_id": user, "grants": grants.map(\.json)])
    }

    func takeBack(context: IntakeRequestContext) async throws -> Response {
        let user = try NotificationRoutes.user(context)
        let id = context.parameters.get("grant_id")?.removingPercentEncoding ?? ""
        guard TimedGrantOrder.isName(id, longest: 64) else {
            throw IntakeError(.badRequest, "invalid_grant_id", "grant_id must be 1 to 64 printable ASCII characters")
        }
        let outcome: EndTimedGrant.Outcome
        do { outcome = try await store.endTimedGrant(user: user, grantID: id, why: .revoked, by: context.clientKey ?? "") } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the grant could not be taken back; send it again")
        }
        switch outcome {
        case .ended(let grant), .unchanged(let grant): return Self.answer(.ok, grant)
        case .notFound: throw IntakeError(.notFound, "grant_not_found", "this user has no grant of that id")
        }
    }

    static func order(_ fields: JSONObject) throws(IntakeError) -> TimedGrantOrder {
        let id = try ReceiptSubmission.requiredString(fields, "grant_id")
        let entitlement = try ReceiptSubmission.requiredString(fields, "entitlement")
        let reason = try ReceiptSubmission.requiredString(fields, "reason")
        var until: Int64?
        if let value = fields["until"], value != .null {
            guard case .string(let text) = value, let ms = try? UserRoutes.since(text) else {
                throw IntakeError(.badRequest, "invalid_until", "until must be an ISO 8601 date-time such as 2026-12-09T00:00:00Z")
            }
            until = ms
        }
        var duration: Duration?
        if let value = fields["duration_s"], value != .null {
            guard let seconds = value.int, seconds > 0 else {
                throw IntakeError(.badRequest, "invalid_until", "duration_s must be a whole number of seconds above 0")
            }
            duration = .seconds(seconds)
        }
        return TimedGrantOrder(grantID: id, entitlement: entitlement, until: until, duration: duration, reason: reason)
    }

    static func answer(_ status: HTTPResponse.Status, _ grant: TimedGrant) -> Response { respond(status, grant.json) }

    static func respond(_ status: HTTPResponse.Status, _ object: [String: Any]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: data)))
    }
}

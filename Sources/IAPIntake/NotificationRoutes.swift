import AppleJWS
import Foundation
import Hummingbird
import PipelineCore
import IAPStages
import Logging
import RedisClient
import NIOCore

/// The URL given to Apple for App Store Server Notifications V2, and the endpoint that tells us
/// which user an `appAccountToken` belongs to. A notification is verified here, at the door (its
/// own signature, its transaction's and its renewal info's), so a forged one never reaches a queue.
package struct NotificationRoutes: Sendable {
    package let store: PipelineStore
    /// `nil` while the intake has no bundle ids: notifications are then refused with 503 (Apple retries).
    package let admission: NotificationAdmission?
    package let maxBodyBytes: Int

    package func register(on router: Router<some RequestContext>) {
        router.post("/v1/notifications/apple") { request, context in try await notification(request, context: context) }
        router.put("/v1/users/{user_id}/app-account-token") { request, context in try await bindToken(request, context: context) }
        router.put("/v1/users/{user_id}/consent") { request, context in try await setConsent(request, context: context) }
        router.put("/v1/users/{user_id}/purchases/{transaction_id}/consumption") { request, context in
            try await recordConsumption(request, context: context)
        }
    }

    func notification(_ request: Request, context: some RequestContext) async throws -> Response {
        let fields = try await IntakeRoutes.jsonFields(request, maxBodyBytes: maxBodyBytes)
        let signedPayload = try ReceiptSubmission.requiredString(fields, "signedPayload")
        guard Base64URL.isCompactJWS(signedPayload) else {
            throw IntakeError(.badRequest, "invalid_jws", "signedPayload must be a compact JWS: three base64url segments")
        }
        guard let admission else {
            context.logger.critical("a notification arrived but IAP_BUNDLE_IDS is not set on the intake: refused, Apple will retry")
            throw IntakeError(.serviceUnavailable, "notifications_not_configured", "this intake cannot check notifications yet")
        }
        let admitted: NotificationAdmission.Admitted
        do {
            admitted = try await admission.admit(signedPayload, logger: context.logger)
        } catch let refusal as NotificationRefusal {
            throw IntakeError(.init(code: refusal.httpStatus), refusal.code.rawValue, refusal.message)
        } catch RedisError.notReplicated(let detail) {
            context.logger.warning("a notification is not replicated yet", metadata: ["detail": "\(detail)"])
            throw IntakeError(.serviceUnavailable, "not_replicated", "the notification is not yet on enough Redis replicas; Apple will retry")
        } catch {
            context.logger.error("cannot store a notification", metadata: ["error": "\(error)"])
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the notification could not be stored; Apple will retry")
        }
        context.logger.info("notification accepted", metadata: [
            "type": "\(admitted.notification.type)", "uuid": "\(admitted.notification.uuid)", "new": "\(admitted.created)",
        ])
        return json(.ok, ["ticket": admitted.ticket, "status": admitted.created ? "accepted" : "seen_before"])
    }

    /// The user id of a `/v1/users/{user_id}/…` path, or 400 `invalid_user_id`.
    static func user(_ context: some RequestContext) throws(IntakeError) -> String {
        // The path carries the user id percent-encoded; a malformed escape leaves it empty (refused).
        let user = context.parameters.get("user_id")?.removingPercentEncoding ?? ""
        guard ReceiptSubmission.isPrintable(user) else {
            throw IntakeError(.badRequest, "invalid_user_id", "user_id must be 1 to 128 printable ASCII characters")
        }
        return user
    }

    func bindToken(_ request: Request, context: some RequestContext) async throws -> Response {
        let user = try Self.user(context)
        let fields = try await IntakeRoutes.jsonFields(request, maxBodyBytes: maxBodyBytes)
        let text = try ReceiptSubmission.requiredString(fields, "app_account_token")
        guard let token = UUID(uuidString: text)?.uuidString.lowercased() else {
            throw IntakeError(.badRequest, "invalid_app_account_token", "app_account_token must be a UUID")
        }
        let bound: String
        do {
            bound = try await store.bindAccountToken(token, to: user)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the token could not be stored; try again")
        }
        guard bound == user else {
            throw IntakeError(.conflict, "app_account_token_taken", "this app_account_token belongs to another user")
        }
        return json(.ok, ["user_id": user, "app_account_token": token])
    }
}

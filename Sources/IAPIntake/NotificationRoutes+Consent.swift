import Hummingbird
import IAPPipeline
import NIOCore
import PlainJSON

extension NotificationRoutes {
    /// `PUT /v1/users/{user_id}/consent` `{"consented": true|false}`: whether the user agreed that
    /// we tell Apple about their purchases when they ask for a refund (`CONSUMPTION_REQUEST`).
    /// Without a `true` here, nothing about the user is ever sent.
    func setConsent(_ request: Request, context: some RequestContext) async throws -> Response {
        let user = try Self.user(context)
        let buffer = try await IntakeRoutes.body(request, maxBodyBytes: maxBodyBytes)
        let body: JSONValue
        do {
            body = try JSONValue(parsing: Array(buffer.readableBytesView))
        } catch {
            throw IntakeError(.badRequest, "malformed_json", "the body is not valid JSON (\(error.reason) at byte \(error.offset))")
        }
        guard case .object(let fields) = body else {
            throw IntakeError(.badRequest, "malformed_json", "the body must be a JSON object")
        }
        guard let value = fields["consented"], value != .null else {
            throw IntakeError(.badRequest, "missing_field", "consented is required")
        }
        guard case .bool(let consented) = value else {
            throw IntakeError(.badRequest, "wrong_type", "consented must be true or false")
        }
        do {
            try await store.setConsent(user: user, consented: consented)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the consent could not be stored; try again")
        }
        return json(.ok, JSONValue.object(["user_id": .string(user), "consented": .bool(consented)]))
    }
}

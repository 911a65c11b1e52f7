import AppleJWS
import Hummingbird
import IAPOperations
import Logging
import PipelineCore
import PlainJSON
import RedisClient

/// `POST /v1/apple/retention` `{"signedPayload": …}`: Apple's Get Retention Message endpoint (the
/// real-time URL given with `iapctl apple retention url`). Open like Apple's notifications: the
/// signed request is its credential (`RetentionAnswers`). The answer is Apple's
/// `RealtimeResponseBody`; `{}` when no rule matched (Apple shows the default message). A refused
/// request records nothing, and any failure makes Apple show the default message too.
package struct RetentionRoutes: Sendable {
    /// `nil`: no catalog or no bundle ids here (every request answers 503 retention_not_configured).
    package let answers: RetentionAnswers?
    package let maxBodyBytes: Int

    package func register(on router: Router<some RequestContext>) {
        router.post("/v1/apple/retention") { request, context in try await answer(request, context: context) }
    }

    func answer(_ request: Request, context: some RequestContext) async throws -> Response {
        let fields = try await IntakeRoutes.jsonFields(request, maxBodyBytes: maxBodyBytes)
        let signedPayload = try ReceiptSubmission.requiredString(fields, "signedPayload")
        guard Base64URL.isCompactJWS(signedPayload) else {
            throw IntakeError(.badRequest, "invalid_jws", "signedPayload must be a compact JWS: three base64url segments")
        }
        guard let answers else {
            throw IntakeError(
                .serviceUnavailable, "retention_not_configured",
                "this intake has no product catalog (IAP_PRODUCTS_FILE) or no IAP_BUNDLE_IDS to answer retention requests by")
        }
        let answer: RetentionAnswers.Answer
        do {
            answer = try await answers.answer(signedPayload, logger: context.logger)
        } catch let refusal as RetentionAnswers.Refusal {
            throw IntakeError(.init(code: refusal.status), refusal.code, refusal.message)
        } catch RedisError.notReplicated(let detail) {
            context.logger.warning("a retention answer is not replicated yet", metadata: ["detail": "\(detail)"])
            throw IntakeError(.serviceUnavailable, "not_replicated", "the answer is not yet on enough Redis replicas")
        } catch {
            context.logger.error("cannot answer a retention request", metadata: ["error": "\(error)"])
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the subscriber's books cannot be read right now")
        }
        context.logger.info("retention request answered", metadata: [
            "rule": "\(answer.rule)", "request": "\(answer.request.requestIdentifier)",
            "original_transaction_id": "\(answer.request.originalTransactionID)",
        ])
        return json(.ok, answer.body)
    }
}

import Foundation
import Hummingbird
import RedisClient

/// A refused request: an HTTP status plus `{"error": {"code", "message"}}` with a stable code.
package struct IntakeError: HTTPResponseError, Equatable {
    package let status: HTTPResponse.Status
    package let code: String
    package let message: String
    /// Whether answering spent something before it failed (Apple's budget, a call to Apple): such
    /// a request's signature stays remembered, so a replay of it is refused.
    package var spent: Bool
    /// The `Retry-After` of a 503 or 429 (1 s unless the refusal says longer).
    package var retryAfter: Duration

    package init(
        _ status: HTTPResponse.Status, _ code: String, _ message: String, spent: Bool = false, retryAfter: Duration = .seconds(1)
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.spent = spent
        self.retryAfter = retryAfter
    }

    /// How long a backend waits before resending what was refused for want of room (a full
    /// queue, a full Redis).
    package static let noRoomRetryAfter: Duration = .seconds(5)

    /// Redis refused a write or did not answer: `503 redis_full` when it is at `maxmemory` (it
    /// keeps every key, `noeviction`, and takes no write until it has room; reads still answer),
    /// else `503 redis_unavailable` with `unavailable` as the message.
    package static func redis(_ error: any Error, _ unavailable: String) -> IntakeError {
        if case RedisError.server(let message) = error, message.hasPrefix("OOM") {
            return IntakeError(
                .serviceUnavailable, "redis_full", "Redis has no room for this right now (maxmemory); resend later",
                retryAfter: noRoomRetryAfter)
        }
        return IntakeError(.serviceUnavailable, "redis_unavailable", unavailable)
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = try JSONSerialization.data(
            withJSONObject: ["error": ["code": code, "message": message]], options: [.sortedKeys])
        var headers: HTTPFields = [.contentType: "application/json"]
        if status == .serviceUnavailable || status == .tooManyRequests { headers[.retryAfter] = String(max(retryAfter.components.seconds, 1)) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

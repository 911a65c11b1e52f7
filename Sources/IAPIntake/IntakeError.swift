import Foundation
import Hummingbird

/// A refused request: an HTTP status plus `{"error": {"code", "message"}}` with a stable code.
public struct IntakeError: HTTPResponseError, Equatable {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    /// Whether answering spent something before it failed (Apple's budget, a call to Apple): such
    /// a request's signature stays remembered, so a replay of it is refused.
    public var spent: Bool

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, spent: Bool = false) {
        self.status = status
        self.code = code
        self.message = message
        self.spent = spent
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = try JSONSerialization.data(
            withJSONObject: ["error": ["code": code, "message": message]], options: [.sortedKeys])
        var headers: HTTPFields = [.contentType: "application/json"]
        if status == .serviceUnavailable || status == .tooManyRequests { headers[.retryAfter] = "1" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

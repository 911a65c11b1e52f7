import HTTPTypes
import Hummingbird
import RedisClient

/// Every answer of the console: a CSP that lets in nothing but the console's own script and style
/// (no inline script, no frames, forms only to itself), `no-store` (pages hold players' data),
/// `nosniff` and no referrer (ids in URLs are personal data).
struct ConsoleHeadersMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        var context = context
        context.wantsJSON = ConsoleJSON.isWanted(accept: request.headers[.accept])
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch is RedisError {
            response = try HTTPError(.serviceUnavailable, message: "Redis does not answer: try again").response(from: request, context: context)
        } catch {
            // Anything else is the console's fault: said as a 500 with these headers too, the cause only in the log.
            context.logger.error("console request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            response = try HTTPError(.internalServerError, message: "the console failed: its log says why").response(from: request, context: context)
        }
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.cacheControl] = "no-store"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "no-referrer"
        response.headers[.xFrameOptions] = "DENY"
        return response
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xFrameOptions = Self("X-Frame-Options")!
}

import HTTPTypes
import Hummingbird

/// Cross-site request forgery stops here: a request that can change something (anything but GET
/// and HEAD) passes only when the browser says it came from the console's own pages
/// (`Sec-Fetch-Site: same-origin`), or, from a browser that does not send that header, when its
/// `Origin` is the console's. Anything else is `403`, before any route (Sidekiq 8.1's rule).
struct SameOriginMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext
    /// `http://127.0.0.1:8081`, as a browser writes the console's origin.
    let origins: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head || Self.isSameOrigin(request, origins: origins) else {
            throw HTTPError(.forbidden, message: "refused: this request did not come from the console's own pages")
        }
        return try await next(request, context)
    }

    static func isSameOrigin(_ request: Request, origins: Set<String>) -> Bool {
        if let site = request.headers[.secFetchSite] { return site == "same-origin" }
        guard let origin = request.headers[.origin] else { return false }
        return origins.contains(origin)
    }
}

extension HTTPField.Name {
    static let secFetchSite = Self("Sec-Fetch-Site")!
}

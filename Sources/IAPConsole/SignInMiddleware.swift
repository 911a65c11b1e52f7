import Hummingbird

/// Finds who is signed in from the session cookie; a page asked for without a session is sent
/// to `/login` (a `GET`) or refused `403` (anything else). Redis unavailable is a `503`.
struct SignInMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext
    static let cookie = "iap_console"
    /// The paths a `finance` user may ask for.
    static let financePaths: Set<String> = ["/business", "/logout"]
    let sessions: ConsoleSessions
    let users: ConsoleUsers

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let id = request.cookies[Self.cookie]?.value {
            let found: ConsoleUser?
            do {
                found = try await sessions.user(for: id)
            } catch {
                throw HTTPError(.serviceUnavailable, message: "Redis does not answer: try again")
            }
            // The role as the users file says now: a user removed or demoted by a reload is so at once.
            if let found, let role = users.role(of: found.name) {
                context.user = ConsoleUser(name: found.name, role: role)
                context.sessionID = id
            }
        }
        guard let user = context.user else {
            guard request.method == .get || request.method == .head else { throw HTTPError(.forbidden, message: "sign in first") }
            return Response.redirect(to: "/login", type: .normal)
        }
        // Finance sees the Business page and nothing else: its home is there, every other path is refused.
        if user.role == .finance, !Self.financePaths.contains(request.uri.path) {
            guard request.uri.path == "/", request.method == .get else { throw HTTPError(.forbidden, message: "finance sees the Business page only") }
            return Response.redirect(to: "/business", type: .normal)
        }
        return try await next(request, context)
    }
}

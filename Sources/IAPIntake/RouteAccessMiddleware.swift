import Hummingbird

/// The intake's door, before every handler: a path not spelled canonically is `400 bad_path`
/// (`CanonicalPath`); a matched route is let through only as `RouteAccess` says, from the route
/// the router matched; an unmatched one goes on to its `404`. Added to the router before any route,
/// so no route is served without it.
struct RouteAccessMiddleware: RouterMiddleware {
    typealias Context = IntakeRequestContext

    /// `nil`: no client keys (an open intake): guarded routes are served unsigned.
    let authenticator: RequestAuthenticator?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let problem = CanonicalPath.problem(in: request.uri.path) {
            throw IntakeError(.badRequest, "bad_path", "\(problem): spell the path as documented")
        }
        guard let route = context.endpointPath else { return try await next(request, context) }
        switch RouteAccess.of(route: route) {
        case nil:
            throw IntakeError(.forbidden, "route_not_classified", "this route is on no access list")
        case .open?:
            return try await next(request, context)
        case .signed(let scope)?:
            guard let authenticator else { return try await next(request, context) }
            return try await authenticator.serve(request, context: context, scope: scope, next: next)
        }
    }
}

/// Who may call each route: read from the route the router matched (its template, as registered:
/// `/v1/users/{user_id}/consent`), never from the path as sent. Denied by default: a route is open
/// only when it is on `openRoutes`, guarded when its template falls in one of `scopes`' rooms, and refused
/// otherwise (a route added without a line here answers `403 route_not_classified` until it has one;
/// `RouteAccessTests` walks the router and fails first).
package enum RouteAccess: Equatable, Sendable {
    /// Anyone may call it: health, the API document, Apple's notifications and its real-time
    /// retention requests (Apple's signature is their credential, checked by the route).
    case open
    /// A request signed with a key of this scope (`IAP_CLIENT_KEYS_FILE`); without keys, anyone.
    case signed(ClientKeys.Scope)

    /// The routes anyone may call, by template (`/metrics` is on the intake's port only while it
    /// has no client keys).
    package static let openRoutes: Set<String> = [
        "/healthz", "/readyz", "/openapi.json", "/metrics", "/v1/notifications/apple", "/v1/apple/retention",
    ]

    /// The guarded rooms: every route under `/v1/<room>/` needs the room's scope.
    static let scopes: [String: ClientKeys.Scope] = [
        "receipts": .receipts, "users": .users, "offers": .offers, "support": .support, "reports": .reports,
    ]

    /// The access of the route registered as `template`; `nil` for a route on neither list.
    package static func of(route template: String) -> RouteAccess? {
        if openRoutes.contains(template) { return .open }
        let segments = template.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 3, segments[0].isEmpty, segments[1] == "v1", let scope = scopes[String(segments[2])] else {
            return nil
        }
        return .signed(scope)
    }
}

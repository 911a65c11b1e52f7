import Foundation
import IAPStages
import Hummingbird
import IAPOperations
import Logging
import Mustache
import PipelineCore
import PlainJSON

/// `iap-console`: server-rendered pages for support and on-call, over the pipeline's store.
/// Every page but `/login` needs a session; every unsafe request must come from the console's own
/// pages (`SameOriginMiddleware`); every answer carries a strict CSP (`ConsoleHeadersMiddleware`).
/// Pages read windows of Redis (the stats, one ticket, one page of a user's index), never a
/// whole list.
package struct ConsoleApplication: Sendable {
    let pages: ConsolePages
    let sessions: ConsoleSessions
    let users: ConsoleUsers
    let library: MustacheLibrary
    /// The console's origins as a browser writes them (`http://127.0.0.1:8081`), for `Origin`.
    let origins: Set<String>
    /// A replayed dead letter's ticket lives this long again (`IAP_TICKET_TTL_S`).
    let ticketTTL: Duration
    /// The session cookie is `Secure` (browsers reach the console over https).
    let secureCookie: Bool
    let throttle: SignInThrottle
    let audit: ConsoleAudit
    /// Support's look-up at Apple; `nil` without a Server API key (`IAP_APPLE_API_*`).
    let support: SupportLookup?

    package init(
        store: PipelineStore, sessions: ConsoleSessions, users: ConsoleUsers, lease: Duration, ticketTTL: Duration, origins: Set<String>,
        secureCookie: Bool = false, support: SupportLookup? = nil, apps: [String?] = [nil], dailyLimits: [String: Int] = [:],
        catalog: ProductCatalog? = nil
    ) throws {
        self.support = support
        pages = ConsolePages(store: store, lease: lease, dailyLimits: dailyLimits, apps: apps, catalog: catalog)
        self.ticketTTL = ticketTTL
        self.secureCookie = secureCookie
        throttle = SignInThrottle(redis: sessions.redis, keys: sessions.keys)
        audit = ConsoleAudit(redis: sessions.redis, keys: sessions.keys)
        self.sessions = sessions
        self.users = users
        self.origins = origins
        var library = MustacheLibrary()
        for (name, text) in ConsoleTemplates.all { try library.register(text, named: name) }
        self.library = library
    }

    package func router() -> Router<ConsoleRequestContext> {
        let router = Router(context: ConsoleRequestContext.self)
        router.add(middleware: ConsoleHeadersMiddleware())
        router.add(middleware: SameOriginMiddleware(origins: origins))
        router.get("/console.css") { _, _ in Self.asset(ConsoleTemplates.css, type: "text/css; charset=utf-8") }
        router.get("/console.js") { _, _ in Self.asset(ConsoleTemplates.script, type: "text/javascript; charset=utf-8") }
        // Browsers ask for it on every page: nothing to show, and no 404 in their logs.
        router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
        router.get("/login") { _, _ in self.page("login", ["title": "Sign in"]) }
        router.post("/login") { request, context in try await self.signIn(request, context: context) }
        // Everything else needs a session: pages for every role, actions for the roles that may.
        let signedIn = router.group().add(middleware: SignInMiddleware(sessions: sessions, users: users))
        addPages(to: signedIn)
        addActions(to: signedIn)
        signedIn.post("/logout") { _, context in try await self.signOut(context: context) }
        return router
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A page rendered through its template, with who is signed in for the header.
    func page(
        _ template: String, _ values: [String: Any], _ context: ConsoleRequestContext? = nil, status: HTTPResponse.Status = .ok
    ) -> Response {
        if context?.wantsJSON == true {
            return Response(
                status: status, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: ConsoleJSON.value(values).canonicalText)))
        }
        var values = values
        if let user = context?.user {
            values["user"] = [
                "name": user.name, "role": user.role.rawValue, "pipeline": user.role != .finance,
                "business": ConsolePages.seesBusiness(user.role),
            ]
        }
        let html = library.render(values, withTemplate: template) ?? ""
        return Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

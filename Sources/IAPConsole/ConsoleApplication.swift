import Foundation
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
public struct ConsoleApplication: Sendable {
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

    public init(
        store: PipelineStore, sessions: ConsoleSessions, users: ConsoleUsers, lease: Duration, ticketTTL: Duration, origins: Set<String>,
        secureCookie: Bool = false, support: SupportLookup? = nil, apps: [String?] = [nil]
    ) throws {
        self.support = support
        pages = ConsolePages(store: store, lease: lease, apps: apps)
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

    public func router() -> Router<ConsoleRequestContext> {
        let router = Router(context: ConsoleRequestContext.self)
        router.add(middleware: ConsoleHeadersMiddleware())
        router.add(middleware: SameOriginMiddleware(origins: origins))
        router.get("/console.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: ConsoleTemplates.css)))
        }
        router.get("/console.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: ConsoleTemplates.script)))
        }
        // Browsers ask for it on every page: nothing to show, and no 404 in their logs.
        router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
        router.get("/login") { _, _ in self.page("login", ["title": "Sign in"]) }
        router.post("/login") { request, context in try await self.signIn(request, context: context) }
        let signedIn = router.group().add(middleware: SignInMiddleware(sessions: sessions, users: users))
        signedIn.get("/") { _, context in try await self.page("overview", self.pages.overview(), context) }
        signedIn.get("/search") { request, context in
            let query = (ConsolePaths.formValue("q", in: request.uri.query) ?? "").trimmingCharacters(in: .whitespaces)
            var shown = try await self.pages.search(query)
            shown["query"] = query
            if self.support != nil, context.user!.role >= ConsolePages.supportRole, ConsolePages.isAppleID(query) {
                shown["lookups"] = ConsolePages.LookupKind.allCases.filter { $0 == .order || query.allSatisfy(\.isNumber) }.map {
                    ["href": ConsolePaths.lookup($0, query), "label": "Look up \($0.rawValue) \(query) at Apple"]
                }
            }
            return self.page("search", shown, context)
        }
        signedIn.get("/tickets/:id") { _, context in
            let id = context.parameters.get("id")?.removingPercentEncoding ?? ""
            guard let shown = try await self.pages.ticket(id) else {
                return self.page("message", ["title": "No such ticket", "text": "No ticket \(id) (it may have expired)."], context, status: .notFound)
            }
            return self.page("ticket", shown, context)
        }
        signedIn.get("/purchases/:id") { _, context in
            let id = context.parameters.get("id")?.removingPercentEncoding ?? ""
            guard ConsolePages.isPrintableID(id), let shown = try await self.pages.purchase(id, role: context.user!.role) else {
                return self.page("message", ["title": "No such purchase", "text": "The books hold no purchase \(id)."], context, status: .notFound)
            }
            return self.page("purchase", shown, context)
        }
        signedIn.get("/lookup") { request, context in try await self.lookUp(request, context: context) }
        signedIn.post("/lookup/grant") { request, context in try await self.grant(request, context: context) }
        signedIn.get("/users/:id") { request, context in
            let id = context.parameters.get("id")?.removingPercentEncoding ?? ""
            guard ConsolePages.isPrintableID(id) else { throw HTTPError(.badRequest, message: "a user id is 1 to 128 printable ASCII characters") }
            let before = request.uri.queryParameters.get("before").flatMap { Int64($0) }
            return try await self.page("user", self.pages.user(id, before: before), context)
        }
        signedIn.get("/dead") { request, context in
            let bucket = request.uri.queryParameters.get("bucket").flatMap { Int($0) } ?? 0
            let start = min(max(request.uri.queryParameters.get("start").flatMap { Int($0) } ?? 0, 0), 1_000_000_000)
            return try await self.page("dead", self.pages.dead(bucket: bucket, start: start), context)
        }
        signedIn.get("/dead/preview") { request, context in
            let query = request.uri.query
            let group = DeadLetterGroup(stage: ConsolePaths.formValue("stage", in: query) ?? "", reason: ConsolePaths.formValue("reason", in: query) ?? "")
            let (bucket, start) = try self.window(query)
            return try await self.page("deadPreview", self.pages.deadPreview(bucket: bucket, start: start, group: group, role: context.user!.role), context)
        }
        signedIn.get("/audit") { request, context in
            let user = context.user!
            guard user.role >= ConsolePages.auditRole else { throw HTTPError(.forbidden, message: "a \(user.role.rawValue) may not read the audit") }
            let before = ConsolePaths.formValue("before", in: request.uri.query).flatMap { ConsolePages.isStreamID($0) ? $0 : nil }
            return try await self.page("audit", self.pages.audit(self.audit, before: before), context)
        }
        signedIn.post("/dead/:action") { request, context in try await self.act(request, context: context) }
        signedIn.get("/held") { request, context in
            let query = request.uri.query
            let after = ConsolePaths.formValue("after", in: query).flatMap { Int64($0) }.flatMap { at in
                ConsolePaths.formValue("unit", in: query).map { (at: at, unit: $0) }
            }
            return try await self.page("held", self.pages.held(role: context.user!.role, after: after), context)
        }
        signedIn.post("/held/:unit/:decision") { request, context in try await self.decide(request, context: context) }
        signedIn.post("/logout") { _, context in
            // Signed out only once Redis forgot the session: a failure is a 503, never a pretence.
            if let id = context.sessionID {
                do {
                    try await self.sessions.close(id)
                } catch {
                    throw HTTPError(.serviceUnavailable, message: "Redis does not answer: you are still signed in; try again")
                }
            }
            var response = Response.redirect(to: "/login", type: .normal)
            response.setCookie(Cookie(
                name: SignInMiddleware.cookie, value: "", maxAge: 0, path: "/", secure: self.secureCookie, httpOnly: true, sameSite: .strict))
            return response
        }
        return router
    }

    struct NoteForm: Decodable {
        var note: String?
    }

    /// A release or rejection: the role checked here, on the POST (not by hiding the button), a
    /// note required, the operator's name from the session.
    private func decide(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        guard let decision = context.parameters.get("decision").flatMap(HoldDecision.init(rawValue:)) else {
            throw HTTPError(.notFound)
        }
        let user = context.user!
        guard user.role >= HoldDecision.role else {
            throw HTTPError(.forbidden, message: "a \(user.role.rawValue) may not release or reject held purchases")
        }
        let unit = context.parameters.get("unit")?.removingPercentEncoding ?? ""
        guard ConsolePages.isPrintableID(unit) else { throw HTTPError(.badRequest, message: "a unit is 1 to 128 printable ASCII characters") }
        let body = try await request.body.collect(upTo: 16 << 10)
        let note = ((try? URLEncodedFormDecoder().decode(NoteForm.self, from: String(buffer: body)))?.note ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !note.isEmpty, note.count <= 500 else {
            return page("message", ["title": "A note is needed", "text": "Say why, in 1 to 500 characters: the note stays with the decision."], context, status: .badRequest)
        }
        let result = try await decision.make(on: pages.store, unit: unit, by: user, note: note)
        context.logger.notice("console hold decision", metadata: [
            "user": "\(user.name)", "unit": "\(unit)", "decision": "\(decision.rawValue)", "result": "\(result)",
        ])
        await audit.record("held.\(decision.rawValue)", by: user.name, target: unit, outcome: "\(HoldDecision.outcome(result)): \(note)", logger: context.logger)
        let (status, text) = HoldDecision.said(result, unit: unit)
        return page("message", ["title": "Held purchase", "text": text], context, status: status)
    }

    /// Which window of which bucket a dead-letter request names; a `400` for one that does not exist.
    private func window(_ query: String?) throws -> (bucket: Int, start: Int) {
        let bucket = ConsolePaths.formValue("bucket", in: query).flatMap { Int($0) } ?? 0
        let start = ConsolePaths.formValue("start", in: query).flatMap { Int($0) } ?? 0
        guard DeadLetterWindow(store: pages.store).key(bucket: bucket) != nil, (0...1_000_000_000).contains(start) else {
            throw HTTPError(.badRequest, message: "no such bucket or window")
        }
        return (bucket, start)
    }

    /// A previewed group's replay or purge: the role checked on the POST, the entries exactly
    /// those the preview named (by digest), each acted on once whoever confirms twice.
    private func act(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        guard let action = context.parameters.get("action").flatMap(DeadLetterAction.init(rawValue:)) else { throw HTTPError(.notFound) }
        let user = context.user!
        guard user.role >= action.role else {
            throw HTTPError(.forbidden, message: "a \(user.role.rawValue) may not \(action.rawValue) dead letters")
        }
        let form = String(buffer: try await request.body.collect(upTo: 64 << 10))
        let (bucket, start) = try window(form)
        let digests = ConsolePaths.formValues("entry", in: form)
        guard (1...DeadLetterWindow.size).contains(digests.count), digests.allSatisfy({ $0.utf8.count == 64 && Hex.decode($0) != nil }),
            let seen = ConsolePaths.formValue("seen", in: form).flatMap({ Int($0) })
        else {
            return page("message", ["title": "Preview first", "text": "Confirm the entries a preview listed: open the group's preview again."], context, status: .badRequest)
        }
        let window = DeadLetterWindow(store: pages.store)
        let (found, missing) = try await window.find(digests: digests, bucket: bucket, start: start, seen: seen)
        var outcome = try await action.perform(on: found, bucket: bucket, store: pages.store, ticketTTL: ticketTTL)
        outcome.missing += missing
        context.logger.notice("console dead letters", metadata: [
            "user": "\(user.name)", "action": "\(action.rawValue)", "bucket": "\(bucket)", "named": "\(digests.count)",
            "done": "\(outcome.done)", "missing": "\(outcome.missing)", "skipped": "\(outcome.skipped)",
        ])
        await audit.record(
            "dead.\(action.rawValue)", by: user.name, target: "bucket \(bucket): \(digests.count) previewed",
            outcome: "done \(outcome.done), missing \(outcome.missing), skipped \(outcome.skipped)", logger: context.logger)
        let (status, text) = action.said(outcome, named: digests.count)
        return page("message", ["title": "Dead letters", "text": text, "done": outcome.done, "missing": outcome.missing, "skipped": outcome.skipped], context, status: status)
    }

    /// Support's look-up at Apple: the role checked (it spends Apple's budget), the kind and id given.
    private func lookUp(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let user = context.user!
        guard user.role >= ConsolePages.supportRole else { throw HTTPError(.forbidden, message: "a \(user.role.rawValue) may not ask Apple") }
        guard let support else {
            return page("message", ["title": "Look-up at Apple", "text": "Apple's Server API is not configured for the console (IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID, IAP_APPLE_API_PRIVATE_KEY_FILE)."], context, status: .serviceUnavailable)
        }
        let query = request.uri.query
        guard let kind = ConsolePaths.formValue("kind", in: query).flatMap(ConsolePages.LookupKind.init(rawValue:)),
            let id = ConsolePaths.formValue("id", in: query)?.trimmingCharacters(in: .whitespaces)
        else { throw HTTPError(.badRequest, message: "give kind (order or transaction) and id") }
        let (values, failure) = await pages.lookup(kind, id: id, with: support, role: user.role)
        context.logger.notice("console look-up at Apple", metadata: ["user": "\(user.name)", "kind": "\(kind.rawValue)", "id": "\(id.prefix(64))"])
        await audit.record("lookup.\(kind.rawValue)", by: user.name, target: id, outcome: failure?.code ?? "found", logger: context.logger)
        let status: HTTPResponse.Status = switch failure?.kind {
        case nil: .ok
        case .invalidID: .badRequest
        case .notFound: .notFound
        case .apple(let transient): transient ? .serviceUnavailable : .badGateway
        case .redis: .serviceUnavailable
        }
        return page("lookup", values, context, status: status)
    }

    struct GrantForm: Decodable {
        var transaction: String
        var user: String
    }

    /// Support's grant of a purchase found at Apple, through the pipeline's own steps (looked up
    /// at Apple again, claimed once): the same user and transaction always give the same ticket.
    private func grant(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let agent = context.user!
        guard agent.role >= ConsolePages.supportRole else { throw HTTPError(.forbidden, message: "a \(agent.role.rawValue) may not grant") }
        guard let support else { throw HTTPError(.serviceUnavailable, message: "Apple's Server API is not configured for the console") }
        let body = try await request.body.collect(upTo: 16 << 10)
        guard let form = try? URLEncodedFormDecoder().decode(GrantForm.self, from: String(buffer: body)),
            (1...128).contains(form.transaction.utf8.count), form.transaction.allSatisfy(\.isNumber), ConsolePages.isPrintableID(form.user)
        else {
            return page("message", ["title": "Grant", "text": "Give the transaction id (digits) and the player's user id (1 to 128 printable characters)."], context, status: .badRequest)
        }
        let made = try await support.grant(transactionID: form.transaction, to: form.user, ticketTTL: ticketTTL)
        context.logger.notice("console support grant", metadata: [
            "user": "\(agent.name)", "transaction": "\(form.transaction)", "to": "\(form.user)", "ticket": "\(made.ticket)", "new": "\(made.created)",
        ])
        await audit.record(
            "support.grant", by: agent.name, target: "\(form.transaction) to \(form.user)",
            outcome: "ticket \(made.ticket)\(made.created ? "" : " (asked before)")", logger: context.logger)
        let text = made.created
            ? "Submitted: ticket \(made.ticket) grants \(form.transaction) to \(form.user) once Apple confirms it (source support)."
            : "Asked before: ticket \(made.ticket) already carries this grant; nothing new was submitted."
        return page("message", ["title": "Grant", "text": text, "ticket": made.ticket, "ticketHref": ConsolePaths.ticket(made.ticket)], context, status: made.created ? .accepted : .ok)
    }

    struct SignInForm: Decodable {
        var username: String
        var password: String
    }

    /// A sign-in: refused while its name has failed too often (before any password is checked),
    /// each failure counted; Redis unavailable is a `503`, never a pretence either way.
    private func signIn(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 16 << 10)
        guard let form = try? URLEncodedFormDecoder().decode(SignInForm.self, from: String(buffer: body)), form.username.utf8.count <= 256 else {
            return page("login", ["title": "Sign in", "error": "Give a name and a password."], status: .badRequest)
        }
        let name = form.username
        let user: ConsoleUser?
        do {
            if let wait = try await throttle.refusal(of: name) {
                context.logger.notice("console sign-in throttled", metadata: ["user": "\(name.prefix(64))"])
                if users.role(of: name) != nil { await audit.record("sign-in", by: name, target: "", outcome: "throttled", logger: context.logger) }
                var response = page("login", [
                    "title": "Sign in", "username": name,
                    "error": "Too many failed sign-ins for this name: try again in \(Int((wait.components.seconds + 59) / 60)) minutes.",
                ], status: .tooManyRequests)
                response.headers[.retryAfter] = String(wait.components.seconds)
                return response
            }
            user = users.authenticate(name: name, password: form.password)
            if user == nil { try await throttle.failed(name) } else { try await throttle.succeeded(name) }
        } catch {
            throw HTTPError(.serviceUnavailable, message: "Redis does not answer: try again")
        }
        guard let user else {
            context.logger.notice("console sign-in refused", metadata: ["user": "\(name.prefix(64))"])
            // Only a known name's refusals: guesses at unknown names would push real entries out.
            if users.role(of: name) != nil { await audit.record("sign-in", by: name, target: "", outcome: "refused", logger: context.logger) }
            return page("login", ["title": "Sign in", "error": "Wrong name or password.", "username": name], status: .unauthorized)
        }
        let id: String
        do {
            id = try await sessions.open(for: user)
        } catch {
            throw HTTPError(.serviceUnavailable, message: "Redis does not answer: try again")
        }
        context.logger.notice("console sign-in", metadata: ["user": "\(user.name)", "role": "\(user.role.rawValue)"])
        await audit.record("sign-in", by: user.name, target: "", outcome: "signed in as \(user.role.rawValue)", logger: context.logger)
        var response = Response.redirect(to: "/", type: .normal)
        response.setCookie(Cookie(
            name: SignInMiddleware.cookie, value: id, maxAge: Int(sessions.lifetime.components.seconds), path: "/", secure: secureCookie,
            httpOnly: true, sameSite: .strict))
        return response
    }

    /// A page rendered through its template, with who is signed in for the header.
    private func page(
        _ template: String, _ values: [String: Any], _ context: ConsoleRequestContext? = nil, status: HTTPResponse.Status = .ok
    ) -> Response {
        if context?.wantsJSON == true {
            return Response(
                status: status, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: ConsoleJSON.value(values).canonicalText)))
        }
        var values = values
        if let user = context?.user { values["user"] = ["name": user.name, "role": user.role.rawValue] }
        let html = library.render(values, withTemplate: template) ?? ""
        return Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

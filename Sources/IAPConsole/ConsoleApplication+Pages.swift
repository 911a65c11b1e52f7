import Foundation
import Hummingbird
import IAPOperations
import PipelineCore

/// The console's pages: reads, for every role signed in (the audit for operators and admins).
/// Each handler parses its query and hands it to `ConsolePages`, which decides what is shown.
extension ConsoleApplication {
    func addPages(to signedIn: RouterGroup<ConsoleRequestContext>) {
        signedIn.get("/") { _, context in try await self.page("overview", self.pages.overview(), context) }
        signedIn.get("/search") { request, context in try await self.search(request, context: context) }
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
        signedIn.get("/users/:id") { request, context in
            let id = context.parameters.get("id")?.removingPercentEncoding ?? ""
            guard ConsolePages.isPrintableID(id) else { throw HTTPError(.badRequest, message: "a user id is 1 to 128 printable ASCII characters") }
            let before = request.uri.queryParameters.get("before").flatMap { Int64($0) }
            let eventsBefore = request.uri.queryParameters.get("events_before").flatMap { ConsolePages.isPrintableID($0) ? $0 : nil }
            return try await self.page(
                "user", self.pages.user(id, before: before, eventsBefore: eventsBefore, role: context.user!.role), context)
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
        signedIn.get("/held") { request, context in
            let query = request.uri.query
            let after = ConsolePaths.formValue("after", in: query).flatMap { Int64($0) }.flatMap { at in
                ConsolePaths.formValue("unit", in: query).map { (at: at, unit: $0) }
            }
            return try await self.page("held", self.pages.held(role: context.user!.role, after: after), context)
        }
        signedIn.get("/business") { request, context in
            let role = context.user!.role
            guard ConsolePages.seesBusiness(role) else { throw HTTPError(.forbidden, message: "a \(role.rawValue) may not see the Business page") }
            let query = request.uri.query
            let days = ConsolePaths.formValue("days", in: query).map { Int($0) ?? 0 } ?? 30
            let environment = ConsolePaths.formValue("environment", in: query) ?? "Production"
            guard ConsolePages.businessWindows.contains(days), ReportQuery.environments.contains(environment) else {
                throw HTTPError(.badRequest, message: "days is 30, 90 or 365; environment Production or Sandbox")
            }
            return try await self.page("business", self.pages.business(days: days, environment: environment), context)
        }
        signedIn.get("/audit") { request, context in
            let user = context.user!
            guard user.role >= ConsolePages.auditRole else { throw HTTPError(.forbidden, message: "a \(user.role.rawValue) may not read the audit") }
            let before = ConsolePaths.formValue("before", in: request.uri.query).flatMap { ConsolePages.isStreamID($0) ? $0 : nil }
            return try await self.page("audit", self.pages.audit(self.audit, before: before), context)
        }
    }

    /// Where the search box leads; for support and above, with a Server API key, also the offer
    /// to ask Apple (which spends its budget, so never done unasked).
    private func search(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let query = (ConsolePaths.formValue("q", in: request.uri.query) ?? "").trimmingCharacters(in: .whitespaces)
        var shown = try await pages.search(query)
        shown["query"] = query
        if support != nil, context.user!.role >= ConsolePages.supportRole, ConsolePages.isAppleID(query) {
            shown["lookups"] = ConsolePages.LookupKind.allCases.filter { $0 == .order || ConsolePages.isDigits(query) }.map {
                ["href": ConsolePaths.lookup($0, query), "label": "Look up \($0.rawValue) \(query) at Apple"]
            }
        }
        return page("search", shown, context)
    }

    /// Which window of which bucket a dead-letter request names; a `400` for one that does not exist.
    func window(_ query: String?) throws -> (bucket: Int, start: Int) {
        let bucket = ConsolePaths.formValue("bucket", in: query).flatMap { Int($0) } ?? 0
        let start = ConsolePaths.formValue("start", in: query).flatMap { Int($0) } ?? 0
        guard DeadLetterWindow(store: pages.store).key(bucket: bucket) != nil, (0...1_000_000_000).contains(start) else {
            throw HTTPError(.badRequest, message: "no such bucket or window")
        }
        return (bucket, start)
    }
}

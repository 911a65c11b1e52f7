import Foundation
import Hummingbird
import IAPOperations
import IAPStages
import PipelineCore
import PlainJSON

/// The console's actions: each checks the role on the request itself (never by what a page
/// showed), takes who acts from the session, and is recorded in the audit.
extension ConsoleApplication {
    func addActions(to signedIn: RouterGroup<ConsoleRequestContext>) {
        signedIn.post("/held/:unit/:decision") { request, context in try await self.decide(request, context: context) }
        signedIn.post("/dead/:action") { request, context in try await self.act(request, context: context) }
        signedIn.get("/lookup") { request, context in try await self.lookUp(request, context: context) }
        signedIn.post("/lookup/grant") { request, context in try await self.grant(request, context: context) }
        signedIn.post("/users/:id/grants") { request, context in try await self.grantForATime(request, context: context) }
        signedIn.post("/users/:id/grants/:grant/end") { request, context in try await self.endGrant(request, context: context) }
    }

    struct TimedGrantForm: Decodable {
        var grant_id: String
        var entitlement: String
        var days: String
        var reason: String
    }

    /// Support gives a user an entitlement for a number of days (`grant_for_a_time`, source
    /// `console`, by the agent): the role checked on the POST, the order checked as the API checks it.
    func grantForATime(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let agent = context.user!
        guard agent.role >= ConsolePages.supportRole else { throw HTTPError(.forbidden, message: "a \(agent.role.rawValue) may not grant") }
        let user = context.parameters.get("id")?.removingPercentEncoding ?? ""
        guard ConsolePages.isPrintableID(user) else { throw HTTPError(.badRequest, message: "a user id is 1 to 128 printable ASCII characters") }
        guard let catalog = pages.catalog else { throw HTTPError(.serviceUnavailable, message: "the console has no product catalog (IAP_PRODUCTS_FILE)") }
        let body = try await request.body.collect(upTo: 16 << 10)
        guard let form = try? URLEncodedFormDecoder().decode(TimedGrantForm.self, from: String(buffer: body)),
            let days = Int(form.days.trimmingCharacters(in: .whitespaces)), (1...365).contains(days)
        else {
            return page("message", ["title": "Grant for a time", "text": "Give a grant id, an entitlement, 1 to 365 days and a reason."], context, status: .badRequest)
        }
        let order = TimedGrantOrder(
            grantID: form.grant_id.trimmingCharacters(in: .whitespaces), entitlement: form.entitlement, duration: .seconds(days * 86_400),
            reason: form.reason.trimmingCharacters(in: .whitespacesAndNewlines))
        let grant: TimedGrant
        do {
            grant = try order.grant(catalog: catalog, source: "console", by: agent.name, now: currentTimeMs())
        } catch {
            return page("message", ["title": "Grant for a time", "text": error.message, "code": error.code], context, status: .badRequest)
        }
        let outcome = try await pages.store.grantForATime(user: user, grant: grant, exactUntil: false)
        let (status, text, result): (HTTPResponse.Status, String, String)
        switch outcome {
        case .granted(let made):
            (status, text, result) = (.created, "\(user) has \(made.entitlement) until \(ConsolePages.time(ms: made.until)).", "granted")
        case .seenBefore(let made):
            (status, text, result) = (.ok, "Granted before under \(made.grantID): \(made.entitlement) until \(ConsolePages.time(ms: made.until)).", "seen before")
        case .idTaken:
            (status, text, result) = (.conflict, "The grant id \(grant.grantID) names another grant of \(user): choose another.", "id taken")
        }
        await audit.record(
            "user.grant", by: agent.name, target: "\(grant.grantID) to \(user)", outcome: "\(result): \(grant.entitlement) \(days) days, \(grant.reason)",
            logger: context.logger)
        return page("message", ["title": "Grant for a time", "text": text, "userHref": ConsolePaths.user(user)], context, status: status)
    }

    /// Support takes a grant for a time back before its end.
    func endGrant(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let agent = context.user!
        guard agent.role >= ConsolePages.supportRole else { throw HTTPError(.forbidden, message: "a \(agent.role.rawValue) may not take grants back") }
        let user = context.parameters.get("id")?.removingPercentEncoding ?? ""
        let id = context.parameters.get("grant")?.removingPercentEncoding ?? ""
        guard ConsolePages.isPrintableID(user), TimedGrantOrder.isName(id, longest: 64) else {
            throw HTTPError(.badRequest, message: "a user id and a grant id of printable ASCII characters")
        }
        let outcome = try await pages.store.endTimedGrant(user: user, grantID: id, why: .revoked, by: agent.name)
        let text: String
        switch outcome {
        case .ended(let grant): text = "\(grant.entitlement) taken back from \(user)."
        case .unchanged(let grant): text = "\(grant.grantID) had ended already (\(grant.endedBy ?? "ended"))."
        case .notFound: return page("message", ["title": "No such grant", "text": "\(user) has no grant \(id)."], context, status: .notFound)
        }
        await audit.record("user.ungrant", by: agent.name, target: "\(id) of \(user)", outcome: text, logger: context.logger)
        return page("message", ["title": "Grant for a time", "text": text, "userHref": ConsolePaths.user(user)], context, status: .ok)
    }

    struct NoteForm: Decodable {
        var note: String?
    }

    /// A release or rejection: the role checked here, on the POST (not by hiding the button), a
    /// note required, the operator's name from the session.
    func decide(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
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

    /// A previewed group's replay or purge: the role checked on the POST, the entries exactly
    /// those the preview named (by digest), each acted on once whoever confirms twice.
    func act(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
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
    func lookUp(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
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
    func grant(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let agent = context.user!
        guard agent.role >= ConsolePages.supportRole else { throw HTTPError(.forbidden, message: "a \(agent.role.rawValue) may not grant") }
        guard let support else { throw HTTPError(.serviceUnavailable, message: "Apple's Server API is not configured for the console") }
        let body = try await request.body.collect(upTo: 16 << 10)
        guard let form = try? URLEncodedFormDecoder().decode(GrantForm.self, from: String(buffer: body)),
            (1...128).contains(form.transaction.utf8.count), ConsolePages.isDigits(form.transaction), ConsolePages.isPrintableID(form.user)
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
}

import Foundation
import IAPOperations
import IAPStages
import PipelineCore
import RedisClient

/// What each page shows, read from the store and shaped for its template: decisions here, in
/// Swift, where the tests see them; the templates only lay it out.
struct ConsolePages: Sendable {
    let store: PipelineStore
    let lease: Duration
    /// The catalog's daily caps by product (`daily_limit_per_user`), for the held page's evidence.
    var dailyLimits: [String: Int] = [:]
    /// The apps whose Server API budgets are kept apart (`IAP_APPS_FILE`'s bundle ids); `[nil]`:
    /// one budget for all.
    var apps: [String?] = [nil]
    /// The catalog (`IAP_PRODUCTS_FILE`): the entitlements support may give for a time; `nil`: none.
    var catalog: ProductCatalog?

    func overview(now: Int64 = currentTimeMs()) async throws -> [String: Any] {
        // Four reads at once: the page waits for the slowest, not for their sum.
        async let read = store.stats(lease: lease, now: now, scanInflight: false)
        async let notificationSweep = store.notificationSweepState()
        async let refundSweep = store.refundSweepState()
        async let budget = store.appleBudget(apps: apps, now: now)
        async let lastHour = store.queueHistory()
        let stats = try await read
        let stages: [[String: Any]] = Stage.allCases.map { stage in
            let name = stage.rawValue
            return [
                "name": name, "queued": stats.queues[name] ?? 0, "inflight": stats.inflight[name] ?? 0,
                "oldest": stats.oldestAgeMs[name].map { Self.age(ms: $0) } ?? "–", "workers": stats.liveWorkers[name] ?? 0,
            ]
        }
        let counts: [[String: Any]] = [
            ("retry", "waiting to retry", stats.retry), ("retryDue", "of them due", stats.retryDue), ("dead", "dead letters", stats.dead),
            ("held", "held purchases", stats.held), ("fulfilment", "fulfilment events", stats.fulfilment),
            ("rechecks", "re-checks scheduled", stats.rechecks), ("rechecksDue", "re-checks due within the hour", stats.rechecksDueNextHour),
        ].map { ["key": $0.0, "label": $0.1, "value": $0.2] }
        let breakers: [[String: Any]] = stats.appleBreakers.sorted { $0.key < $1.key }.map { name, breaker in
            Self.present([
                "name": name, "state": breaker.openSinceMs == nil ? "closed" : "open", "failures": breaker.failures, "last": breaker.lastFailure,
                "class": breaker.openSinceMs == nil ? "quiet" : "warn",
            ])
        }
        let sweeps = [("notification sweep", try await notificationSweep), ("refund sweep", try await refundSweep)]
            .map { name, state in ["text": Self.sweep(name, state, now: now)] }
        let apple: [[String: Any]] = try await budget.map { use in
            let hold = use.heldUntil.map { ", held after Apple's 429 until \(Self.time(ms: $0))" } ?? ""
            return ["text": "Apple's Server API, \(use.environment) \(use.endpoint): \(use.callsLastSecond) calls in the last second\(hold)",
                    "class": use.heldUntil == nil ? "quiet" : "warn"]
        }
        let history = try await lastHour
        return [
            "title": "Overview", "stages": stages, "counts": counts, "breakers": breakers, "sweeps": sweeps, "apple": apple, "asOf": Self.time(ms: now),
            "history": QueueChart.charts(history, now: now), "hasHistory": !history.samples.isEmpty, "lastHour": QueueChart.lastHour(history),
            "iapctl": "iapctl stats",
        ]
    }

    /// A sweep's lease as one line: who holds it and until when, when it runs next.
    static func sweep(_ name: String, _ state: [String: String], now: Int64) -> String {
        guard !state.isEmpty else { return "\(name): has not run (off, or no notifier yet)" }
        let next = state["next_at"].flatMap { Int64($0) }.map { ", next at \(time(ms: $0))" } ?? ""
        if let owner = state["owner"], let until = state["lease_until"].flatMap({ Int64($0) }), until > now {
            return "\(name): running on \(owner), its lease until \(time(ms: until))\(next)"
        }
        return "\(name): idle\(next)"
    }

    /// Where `query` leads: a ticket, a purchase (by grant unit, transaction id or original
    /// transaction id), a notification's ticket, a user with a record, or nothing.
    func search(_ query: String) async throws -> [String: Any] {
        var results: [[String: Any]] = []
        if Self.isPrintableID(query), let story = try await store.purchaseStory(of: query) {
            let state = story.grant["revoked_at"] != nil ? "revoked" : story.grant["user_id"].map { "granted to \($0)" }
                ?? story.hold["status"] ?? story.subscription["status"] ?? "not granted"
            results.append(["href": ConsolePaths.purchase(query), "label": "purchase \(query)", "detail": state])
        }
        if Self.isUUID(query), let ticket = try await store.notificationTicket(uuid: query.lowercased()) {
            results.append(["href": ConsolePaths.ticket(ticket), "label": "notification \(query)", "detail": "ticket \(ticket)"])
        }
        if Self.couldBeTicket(query), let ticket = try await store.ticket(query) {
            results.append(["href": ConsolePaths.ticket(query), "label": "ticket \(query)", "detail": ticket.status.rawValue])
        }
        if Self.isPrintableID(query) {
            let record = try await store.userRecord(of: query, limit: 1)
            if !record.purchases.isEmpty || !record.subscriptions.isEmpty || !record.appleAccounts.isEmpty || record.consent != nil {
                results.append(["href": ConsolePaths.user(query), "label": "user \(query)", "detail": ""])
            }
        }
        return ["title": "Search", "results": results]
    }

    func ticket(_ id: String) async throws -> [String: Any]? {
        guard Self.couldBeTicket(id), let ticket = try await store.ticket(id) else { return nil }
        let fields: [(String, String?)] = [
            ("status", ticket.status.rawValue), ("reason", ticket.reason), ("result", ticket.result), ("last error", ticket.lastError),
            ("environment", ticket.environment), ("attempts", String(ticket.attempts)), ("created", ticket.createdAt),
            ("updated", ticket.updatedAt), ("submitted with key", ticket.clientKey),
        ]
        let transactions: [[String: Any]] = ticket.transactions.map {
            Self.present([
                "transactionID": $0.transactionID, "originalTransactionID": $0.originalTransactionID, "productID": $0.productID,
                "quantity": $0.quantity, "outcome": $0.outcome.rawValue, "reason": $0.reason ?? "",
                // A non-consumable's unit, a subscription's record, a consumable's (its own original) unit.
                "unitHref": ConsolePaths.purchase($0.originalTransactionID),
            ])
        }
        return [
            "title": "Ticket \(id)", "fields": Self.present(fields), "transactions": transactions, "hasTransactions": !transactions.isEmpty,
            "iapctl": "iapctl ticket \(ConsolePaths.shellQuoted(id))",
        ]
    }

    func user(_ id: String, before: Int64?, eventsBefore: String? = nil, role: ConsoleRole = .viewer, now: Int64 = currentTimeMs()) async throws -> [String: Any] {
        let record = try await store.userRecord(of: id, limit: 50, before: before)
        let events = try await store.userEvents(of: id, limit: 50, before: eventsBefore)
        let canGrant = role >= Self.supportRole && catalog != nil
        let grants: [[String: Any]] = try await store.timedGrants(of: id).sorted { $0.grantedAt > $1.grantedAt }.map { grant in
            Self.present([
                "id": grant.grantID, "entitlement": grant.entitlement, "until": Self.time(ms: grant.until), "reason": grant.reason,
                "by": grant.by.isEmpty ? grant.source : "\(grant.by) (\(grant.source))",
                "state": grant.isActive(at: now) ? "active" : grant.endedBy ?? "ended",
                "endAction": canGrant && grant.isActive(at: now) ? ConsolePaths.endGrant(user: id, grant: grant.grantID) : nil,
            ])
        }
        let entitlements = Set((catalog?.entitlements.values).map { Array($0.joined()) } ?? []).sorted()
        let fields: [(String, String?)] = [
            ("Apple Accounts", record.appleAccounts.isEmpty ? nil : record.appleAccounts.joined(separator: ", ")),
            ("consent", record.consent.map { $0 ? "yes" : "no" }), ("app account token", record.appAccountToken),
            ("refunds", "\(record.refunds.whole) whole, \(record.refunds.prorated) milliunits in part"),
        ]
        let purchases: [[String: Any]] = record.purchases.map { purchase in
            [
                "state": purchase["state"] ?? "", "unit": purchase["unit"] ?? "", "unitHref": ConsolePaths.purchase(purchase["unit"] ?? ""),
                "product": purchase["product_id"] ?? "",
                "quantity": purchase["quantity"] ?? "", "source": purchase["source"] ?? "",
                "granted": purchase["granted_at"].flatMap { Int64($0) }.map { Self.time(ms: $0) } ?? "",
                "reason": purchase["reason"] ?? "",
            ]
        }
        let subscriptions: [[String: Any]] = record.subscriptions.sorted { $0.key < $1.key }.map { id, subscription in
            Self.present([
                "id": id, "product": subscription["product_id"] ?? "", "status": subscription["status"] ?? "",
                "expires": subscription["expires_at"].flatMap { Int64($0) }.map { Self.time(ms: $0) },
            ])
        }
        return Self.present([
            "title": "User \(id)", "fields": Self.present(fields), "purchases": purchases, "hasPurchases": !purchases.isEmpty,
            "olderHref": record.nextBefore.map { ConsolePaths.user(id, before: $0) }, "subscriptions": subscriptions,
            "events": events.events.map(eventRow), "hasEvents": !events.events.isEmpty,
            "olderEventsHref": events.nextBefore.map { ConsolePaths.user(id, eventsBefore: $0) },
            "grants": grants, "hasGrants": !grants.isEmpty, "canGrant": canGrant, "grantAction": ConsolePaths.grants(user: id),
            "entitlements": entitlements.map { ["name": $0] },
            "iapctl": "iapctl user show \(ConsolePaths.shellQuoted(id))",
        ])
    }

    /// One of a user's events as its row shows it: the story of its purchase one click away.
    private func eventRow(_ event: UserEvent) -> [String: Any] {
        let purchase = event.unit.isEmpty ? event.originalTransactionID : event.unit
        return Self.present([
            "at": Self.time(ms: event.at), "event": event.event, "product": event.productID, "purchase": purchase,
            "purchaseHref": purchase.isEmpty ? nil : ConsolePaths.purchase(purchase), "entry": event.entryID,
            "delivery": event.delivery ?? "no webhook",
        ])
    }

    /// The oldest `limit` held purchases (after `after`, the last one the previous page showed),
    /// each with its rule's evidence beside it; the forms to decide them only for a role that may.
    func held(role: ConsoleRole, after: (at: Int64, unit: String)? = nil, limit: Int = 50) async throws -> [String: Any] {
        let held = try await store.heldPurchases(limit: limit + 1, after: after)
        let shown = Array(held.prefix(limit))
        let evidence = try await store.evidence(for: shown)
        let rows: [[String: Any]] = zip(shown, evidence).map { hold, evidence in
            [
                "heldAt": Self.time(ms: hold.heldAt), "reason": hold.reason, "user": hold.userID, "userHref": ConsolePaths.user(hold.userID),
                "product": hold.productID, "quantity": hold.quantity, "currency": hold.currency ?? "", "source": hold.source,
                "ticket": hold.ticket, "ticketHref": ConsolePaths.ticket(hold.ticket), "storyHref": ConsolePaths.purchase(hold.unit),
                "evidence": lines(evidence, of: hold).map { ["line": $0] },
                "releaseAction": ConsolePaths.held(hold.unit, .release), "rejectAction": ConsolePaths.held(hold.unit, .reject),
            ]
        }
        return Self.present([
            "title": "Held purchases", "held": rows, "hasHeld": !rows.isEmpty, "shown": rows.count, "first": after == nil,
            "nextHref": held.count > limit ? shown.last.map { ConsolePaths.held(after: $0.heldAt, unit: $0.unit) } : nil,
            "canDecide": role >= HoldDecision.role, "iapctl": "iapctl held list",
        ])
    }

    /// A rule's evidence as a few lines of text.
    func lines(_ evidence: HoldEvidence, of hold: HeldPurchase) -> [String] {
        var lines: [String] = []
        if let window = evidence.dailyWindow {
            let cap = dailyLimits[hold.productID].map { " (the cap: \($0) a day)" } ?? ""
            lines.append("\(window.count) of \(hold.productID) granted to the user in the last 24 hours\(cap)")
            lines += window.suffix(5).map { "\(Self.time(ms: $0.at)): \($0.unit)" }
        }
        if let refunds = evidence.refunds {
            lines.append("refunds: \(refunds.whole) whole, \(refunds.prorated) milliunits in part (100000 is one)")
        }
        if let account = evidence.appleAccount {
            lines.append("Apple Account \(account.id): this user joined \(account.place.map { "as number \($0)" } ?? "?") of \(account.joined)")
            lines += (account.seats ?? []).prefix(10).map { "\($0.place). \($0.user)" }
        }
        if hold.reason.hasPrefix("currency_") {
            lines.append(evidence.currency.map { "paid in \($0)" } ?? "the currency is unknown (a legacy receipt does not say it)")
        }
        return lines
    }

    /// A ticket id's characters (`A-Z a-z 0-9 _ - . :`, at most 64): an errand's too (`finish-…`).
    static func couldBeTicket(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || Array("_-.:".utf8).contains(byte)
        }
    }

    /// Who may read the audit of console actions: operators and admins.
    static let auditRole = ConsoleRole.operator

    /// The newest 50 console actions (before `before`, an entry id), newest first.
    func audit(_ audit: ConsoleAudit, before: String?) async throws -> [String: Any] {
        let entries = try await audit.newest(50, before: before)
        let rows: [[String: Any]] = entries.map { id, entry in
            ["at": Self.time(ms: entry.at), "user": entry.fields["user"] ?? "", "action": entry.fields["action"] ?? "",
             "target": entry.fields["target"] ?? "", "outcome": entry.fields["outcome"] ?? ""]
        }
        return Self.present([
            "title": "Audit", "entries": rows, "hasEntries": !rows.isEmpty,
            "olderHref": entries.count == 50 ? entries.last.map { "/audit?before=" + $0.id } : nil,
            "iapctl": "redis-cli XREVRANGE \(audit.keys.consoleAudit) + - COUNT 50",
        ])
    }

    /// A stream entry id (`<ms>-<seq>`).
    static func isStreamID(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.count <= 20 && isDigits($0) }
    }

    /// What Apple could know as an order id (letters and digits) or a transaction id (digits).
    static func isAppleID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) }
    }

    /// ASCII digits only (`Character.isNumber` also takes `½` and `٣`).
    static func isDigits(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// Apple's notification UUIDs: 8-4-4-4-12 hexadecimal digits.
    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// A user id or a unit: 1 to 128 printable ASCII characters, as the intake takes them.
    static func isPrintableID(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text.utf8.allSatisfy { (0x20...0x7e).contains($0) }
    }

    /// The values that are there: a `nil` boxed in `Any` would count as present to a template
    /// section (a link to older purchases where there are none).
    static func present(_ values: [String: Any?]) -> [String: Any] {
        values.compactMapValues { $0 }
    }

    static func present(_ fields: [(String, String?)]) -> [[String: Any]] {
        fields.compactMap { name, value in value.map { ["name": name, "value": $0] } }
    }

    /// A time as ISO 8601 in UTC (`2026-11-27T05:04:54Z`): one value-type style for every row,
    /// not a formatter made per call.
    static func time(ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(iso8601)
    }

    private static let iso8601 = Date.ISO8601FormatStyle()

    static func age(ms: Int64) -> String {
        ms < 1000 ? "\(ms) ms" : ms < 120_000 ? "\(ms / 1000) s" : ms < 7_200_000 ? "\(ms / 60_000) min" : "\(ms / 3_600_000) h"
    }
}

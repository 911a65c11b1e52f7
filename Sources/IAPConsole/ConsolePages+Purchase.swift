import IAPOperations
import PipelineCore
import PlainJSON

/// A purchase's whole story, in the order it happens: submitted, claimed, held and decided,
/// granted, refunded, the subscription's state, what the game said when Apple asked. Each step
/// says what the viewer's role may do next. Never the evidence.
extension ConsolePages {
    func purchase(_ id: String, role: ConsoleRole) async throws -> [String: Any]? {
        guard let story = try await store.purchaseStory(of: id) else { return nil }
        let steps = submitted(story) + decided(story, role: role) + granted(story, role: role) + afterwards(story)
        let transaction = story.grant["transaction_id"] ?? story.hold["transaction_id"]
        return Self.present([
            "title": story.unit.map { "Purchase \($0)" } ?? "Subscription \(story.originalTransactionID)",
            "steps": steps.map { Self.present($0) },
            "iapctl": transaction.map { "iapctl lookup transaction \(ConsolePaths.shellQuoted($0))" },
        ])
    }

    private typealias Step = [String: Any?]

    private func step(_ what: String, at ms: String?, _ detail: String, href: String? = nil, link: String? = nil, next: String? = nil) -> Step {
        // Times in ms, as the books keep them; a ticket's are already ISO 8601.
        ["what": what, "at": ms.map { Int64($0).map { Self.time(ms: $0) } ?? $0 } ?? "", "detail": detail, "href": href, "link": link, "next": next]
    }

    private func submitted(_ story: PurchaseStory) -> [Step] {
        guard let claim = story.claimTicket else { return [] }
        guard let ticket = story.ticket else {
            return [step("claimed", at: nil, "by ticket \(claim), which has expired (tickets are kept IAP_TICKET_TTL_S)")]
        }
        let key = ticket.clientKey.map { " with key \($0)" } ?? ""
        return [
            step("submitted", at: ticket.createdAt, "ticket \(claim)\(key); now \(ticket.status.rawValue)", href: ConsolePaths.ticket(claim), link: "the ticket"),
            step("claimed", at: nil, "once, by that ticket: any other ticket with this purchase ends duplicate"),
        ]
    }

    private func decided(_ story: PurchaseStory, role: ConsoleRole) -> [Step] {
        guard let reason = story.hold["reason"] else { return [] }
        let status = story.hold["status"] ?? "held"
        var steps = [step(
            "held", at: story.hold["held_at"], "by the purchase policy: \(reason)", href: "/held", link: "held purchases",
            next: status != "held" ? nil : role >= HoldDecision.role ? "You may release or reject it on the held page." : "An operator may release or reject it.")]
        if status != "held" {
            let note = story.hold["note"].map { ": “\($0)”" } ?? ""
            steps.append(step(status, at: story.hold["decided_at"], "by \(story.hold["decided_by"] ?? "?")\(note)"))
        }
        return steps
    }

    private func granted(_ story: PurchaseStory, role: ConsoleRole) -> [Step] {
        var steps: [Step] = []
        if let refunded = story.refundedBeforeGrant {
            steps.append(step("refunded before the grant", at: refunded, "Apple refunded or revoked it first: it is never granted"))
        }
        let grant = story.grant
        guard let user = grant["user_id"] else {
            if story.unit != nil, story.hold.isEmpty, story.refundedBeforeGrant == nil {
                steps.append(step("not granted", at: nil, "the books hold no grant of it", next: role >= .support
                    ? "Look it up at Apple and grant it: iapctl lookup transaction ID --grant-to USER." : "Support may look it up at Apple and grant it."))
            }
            return steps
        }
        // Apple's price for people (`$4.99`), in its currency; the raw milliunits when the currency is unknown.
        let price = grant["price"].flatMap { price in
            grant["currency"].flatMap { currency in Int64(price).map { "price \(MoneyText.format(milliunits: $0, currency: currency))" } }
                ?? "price \(price) milliunits"
        }
        let sold = [price, grant["storefront"].map { "storefront \($0)" }].compactMap { $0 }
        let account = grant["app_transaction_id"].map { ", Apple Account \($0)" } ?? ""
        steps.append(step(
            "granted", at: grant["granted_at"],
            "\(grant["product_id"] ?? "?") × \(grant["quantity"] ?? "1") to \(user), source \(grant["source"] ?? "client"), "
                + "\(grant["environment"] ?? "")\(account)\(sold.isEmpty ? "" : " (" + sold.joined(separator: " ") + ")")",
            href: ConsolePaths.user(user), link: "the user's record"))
        if let at = grant["partially_revoked_at"] {
            steps.append(step("refunded in part", at: at, "\(grant["revoked_quantity"] ?? "?") of \(grant["quantity"] ?? "?") taken back (\(grant["revocation_percentage"] ?? "?"))"))
        }
        if let at = grant["revoked_at"] {
            steps.append(step("revoked", at: at, "reason \(grant["revocation_reason"] ?? "?"), \(grant["revocation_type"] ?? "refund")"))
        }
        if let at = grant["reinstated_at"] { steps.append(step("reinstated", at: at, "Apple reversed the refund")) }
        return steps
    }

    private func afterwards(_ story: PurchaseStory) -> [Step] {
        var steps: [Step] = []
        let subscription = story.subscription
        if let status = subscription["status"] {
            let renew = subscription["auto_renew"].map { $0 == "1" || $0 == "true" ? ", renews" : ", does not renew" } ?? ""
            let until = subscription["expires_at"].flatMap { Int64($0) }.map { " until \(Self.time(ms: $0))" } ?? ""
            let owner = subscription["user_id"] ?? story.owner ?? "?"
            steps.append(step(
                "subscription", at: subscription["updated_at"], "\(subscription["product_id"] ?? "?") of \(owner): \(status)\(until)\(renew)",
                href: ConsolePaths.user(owner), link: "the owner's record",
                next: story.nextRecheck.map { "Re-checked with Apple at \(Self.time(ms: $0))." }))
        } else if story.unit == nil, let owner = story.owner {
            steps.append(step("owned", at: nil, "first granted to \(owner)", href: ConsolePaths.user(owner), link: "the owner's record"))
        }
        if let waiting = story.webhookWaiting, waiting > 0 {
            steps.append(step("webhook", at: nil, "\(waiting) of the user's events wait for your webhook (delivered in order)"))
        }
        for text in story.notifications {
            guard let note = try? JSONValue(parsing: text), let type = note["type"]?.string else { continue }
            let subtype = note["subtype"]?.string.map { " / \($0)" } ?? ""
            steps.append(step("Apple said", at: note["signed_date"]?.lenientString, "\(type)\(subtype) (notification \(note["uuid"]?.string ?? "?"))"))
        }
        if let said = story.consumption, let facts = try? JSONValue(parsing: said) {
            let share = facts["consumption_percentage"]?.lenientString.map { ", \($0) consumed" } ?? ""
            steps.append(step("consumption", at: facts["recorded_at"]?.lenientString, "the game said \(facts["delivery_status"]?.string ?? "?")\(share)"))
        }
        if let consent = story.consent {
            steps.append(step("consent", at: nil, consent ? "the user consented to Apple being told" : "the user declined Apple being told"))
        }
        return steps
    }
}

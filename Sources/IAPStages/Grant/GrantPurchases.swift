import AppleReceipt
import PipelineCore
import PlainJSON
import RedisClient

/// `grant_purchases`: the grant stage's one step per job (see `Lua/grant_purchases.lua`). Every
/// key is declared: the job's and its user's, each purchase's by name (`k`), and the keys of any
/// other user the step reaches (a transfer's holder, a renewal's owner) once the script names them.
package struct GrantPurchases: DeclaringScript {
    package static let script = LuaSource.script("grant_purchases")
    private let redisKeys: RedisKeys
    private var declared: DeclaredKeys
    private var members: GrantPurchasesArguments
    package private(set) var arguments: [String]
    package var keys: [String] { declared.list }

    package init(
        _ keys: RedisKeys, member: String, taken: String, job: Job, work: Job.Claimed? = nil, refunds: Double?,
        places: [String: Bool] = [:],
        shared: Set<String> = [], keep: Bool = false, recheck: RecheckSchedule?, accountToken: AccountTokenSetting? = nil,
        finishTickets: Duration? = nil, now: Int64
    ) {
        redisKeys = keys
        let user = job.userID
        var declared = DeclaredKeys([
            keys.inflight(member: member), keys.ticket(job.ownTicket), keys.fulfilment, keys.unclaimed, keys.holds,
            keys.lifetime(user: user), keys.subscriptions(user: user), keys.purchases(user: user), keys.refundsProrated(user: user),
            keys.userEvents, keys.figures(day: FigureDay(milliseconds: now)),
        ])
        // The job's work as the caller read it (`grantWork` copies it out of the job each time).
        let work = work ?? job.grantWork
        let purchases = work.purchases
        let environment = work.environment ?? ""
        var notifyQueue: Int?
        var lines: [GrantPurchasesArguments.Line] = []
        // An errand the script queues if it grants the purchase: its ticket declared (KEYS index
        // under `name` in the line's `k`), the bucket's notify queue too; the job, encoded.
        func errand(_ request: some AppleErrand, about id: String, ticketKey name: StaticString, on line: inout GrantPurchasesArguments.Line) -> String {
            let ticket = type(of: request).ticket(for: id, in: keys)
            line.keys.append((name, declared.index(of: keys.ticket(ticket))))
            notifyQueue = notifyQueue ?? declared.index(of: keys.queue(.notify))
            return request.job(ticket: ticket, user: user, now: now).encoded()
        }
        for purchase in purchases {
            var line = Self.line(purchase, places: places, shared: shared, environment: environment)
            // The app it was bought in, on the record and its events (a destination's `apps` filter).
            if let bundleID = work.appBundleID, !bundleID.isEmpty { line.sale += ["bundle_id", bundleID] }
            Self.claimKeys(purchase, keys: keys, declared: &declared, into: &line.keys)
            if let setting = accountToken, purchase.isClaimed, purchase.unit != nil, line.appAccountToken == nil,
               let transaction = purchase.transaction, !transaction.isFamilyShared, !environment.isEmpty
            {
                // A purchase without a token, granted to a user who has one: Apple is asked to set it.
                let request = AppAccountTokenRequest(
                    originalTransactionID: purchase.originalTransactionID, appAccountToken: setting.token,
                    environment: environment, bundleID: work.appBundleID)
                line.tokenJob = errand(request, about: purchase.originalTransactionID, ticketKey: "token_ticket", on: &line)
            }
            if finishTickets != nil, purchase.isClaimed, purchase.unit != nil, purchase.consumable == true, !environment.isEmpty {
                // A consumable granted here is finished at Apple, so no crashed client is handed it again.
                let request = FinishTransactionRequest(
                    transactionID: purchase.transactionID, environment: environment, bundleID: work.appBundleID)
                line.finishJob = errand(request, about: purchase.transactionID, ticketKey: "finish_ticket", on: &line)
            }
            Self.subscriptionKeys(purchase, keys: keys, declared: &declared, into: &line.keys)
            lines.append(line)
        }
        let subscription = work.renewal.map {
            var change = PipelineStore.recheckChange($0, latest: work.renewalPeriod, environment: environment, purchases: purchases)
            change.bundleID = work.appBundleID
            return change
        }
        let subscriptionKey = subscription.map {
            declared.index(of: keys.subscription(originalTransactionID: $0.originalTransactionID))
        }
        let rechecksKey = subscription.map {
            declared.index(of: keys.ofPurchase(originalTransactionID: $0.originalTransactionID).rechecks)
        }
        let subscribersKey = subscription.map {
            declared.index(of: keys.ofPurchase(originalTransactionID: $0.originalTransactionID).subscribers)
        }
        members = GrantPurchasesArguments(
            ticket: job.ticket, part: job.part, keep: keep || job.part != nil, now: String(now), channel: keys.results, userID: user,
            environment: environment, source: job.source ?? "client",
            refundLimit: work.refundLimit.map(String.init), refunds: refunds.map { String($0) }, sharing: work.sharing?.rawValue,
            purchases: lines,
            recheck: recheck, subscription: subscription, subscriptionKey: subscriptionKey, rechecksKey: rechecksKey,
            subscribersKey: subscribersKey, receipt: work.subscriptionReceipt, notifyQueue: notifyQueue,
            ticketTTL: notifyQueue == nil ? nil : (accountToken?.ticketTTL ?? finishTickets).map { String($0.components.seconds) })
        members.bundleID = work.appBundleID
        self.declared = declared
        arguments = [taken, members.argument]
    }

    /// A purchase as the script reads it (its keys and token errand are added by the caller).
    private static func line(
        _ purchase: Purchase, places: [String: Bool], shared: Set<String>, environment: String
    ) -> GrantPurchasesArguments.Line {
        // A pending or held purchase without a unit cannot be claimed: it is rejected, never granted blind.
        let outcome = purchase.isClaimed && purchase.unit == nil ? PurchaseOutcome.rejected : purchase.outcome
        let reason = outcome == purchase.outcome ? purchase.reason : nil
        return .init(
            transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
            productID: purchase.productID, quantity: String(purchase.quantity), unit: purchase.unit,
            outcome: outcome.rawValue, reason: outcome == .rejected ? reason ?? ReasonCode.noGrantUnit : reason,
            appAccountToken: purchase.transaction?.appAccountToken?.lowercased(), appTransactionID: purchase.transaction?.appTransactionID,
            accountShared: shared.contains(purchase.transactionID) ? "1" : nil, currency: purchase.currency,
            dailyLimit: purchase.dailyLimit.map(String.init),
            dailyReserved: purchase.dailyLimit == nil ? nil : purchase.unit.flatMap { places[$0] }.map { $0 ? "1" : "0" },
            kind: purchase.kind,
            entitlements: purchase.entitlements.flatMap { $0.isEmpty ? nil : $0.joined(separator: ",") },
            expiresAt: purchase.expiresAt.map(String.init), signedAt: purchase.signedAt.map(String.init),
            adopt: purchase.adopt == true ? "1" : nil,
            periodMRR: purchase.kind == "auto_renewable"
                ? MonthlyPrice.milliunits(of: purchase.transaction, environment: environment).map(String.init) : nil,
            sale: purchase.transaction?.saleFields ?? [], tokenJob: nil, keys: [])
    }

    /// A claimed purchase's own keys, by name (`k`): its claim, grant record, hold, refund mark and owner.
    private static func claimKeys(
        _ purchase: Purchase, keys: RedisKeys, declared: inout DeclaredKeys, into k: inout [GrantPurchasesArguments.Key]
    ) {
        guard purchase.isClaimed, let unit = purchase.unit else { return }
        let original = purchase.originalTransactionID
        k.append(("claim", declared.index(of: keys.claim(unit: unit, originalTransactionID: original))))
        k.append(("record", declared.index(of: keys.grant(unit: unit, originalTransactionID: original))))
        k.append(("hold", declared.index(of: keys.hold(unit: unit, originalTransactionID: original))))
        k.append(("refunded", declared.index(of: keys.refunded(unit: unit, originalTransactionID: original))))
        k.append(("owner", declared.index(of: keys.owner(originalTransactionID: original))))
    }

    /// The record and re-checks of the subscription a purchase may be a period of.
    private static func subscriptionKeys(
        _ purchase: Purchase, keys: RedisKeys, declared: inout DeclaredKeys, into k: inout [GrantPurchasesArguments.Key]
    ) {
        let renewable = purchase.kind == "auto_renewable"
        guard purchase.isClaimed || renewable else { return }
        let ofPurchase = keys.ofPurchase(originalTransactionID: purchase.originalTransactionID)
        k.append(("subscription", declared.index(of: keys.subscription(originalTransactionID: purchase.originalTransactionID))))
        k.append(("rechecks", declared.index(of: ofPurchase.rechecks)))
        if renewable { k.append(("subscribers", declared.index(of: ofPurchase.subscribers))) }
    }

    /// The users the script named (a JSON array): their lifetime and subscriptions sets.
    package mutating func declare(_ needed: RedisReply) throws {
        guard let users = try needed.json(script: Self.name).array?.compactMap(\.string), !users.isEmpty else {
            throw ScriptReplyError(script: Self.name, reply: needed)
        }
        for user in users {
            members.others[user] = [
                "lifetime": declared.index(of: redisKeys.lifetime(user: user)),
                "subscriptions": declared.index(of: redisKeys.subscriptions(user: user)),
                "purchases": declared.index(of: redisKeys.purchases(user: user)),
            ]
        }
        arguments[1] = members.argument
    }

    /// `{1, status, transactions, reason, kept}`, `{0}`, `{-1}`: how the job moved and, when it
    /// did, what it set on its ticket and which daily places stay taken.
    package static func decode(_ reply: RedisReply) throws -> (TransitionResult, GrantOutcome?) {
        let result = try TransitionResult(reply, script: name)
        guard result == .moved else { return (result, nil) }
        guard let items = reply.array, items.count == 5, let status = items[1].string.flatMap(TicketStatus.init(rawValue:)),
            let transactions = items[2].string, let reason = items[3].string, let kept = items[4].string
        else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        return (result, GrantOutcome(
            status: status, transactions: transactions, reason: reason.isEmpty ? nil : reason,
            keptPlaces: Set(kept.split(separator: "\n").map(String.init))))
    }
}

/// What `grant_purchases` set on the job's ticket: its status, its purchases' lines (JSON array
/// text) and, when rejected, why.
package struct GrantOutcome: Sendable, Equatable {
    package var status: TicketStatus
    package var transactions: String
    package var reason: String?
    /// The units with a place in the user's daily window that stand granted to the user: they
    /// keep it; the other reserved units give theirs back.
    package var keptPlaces: Set<String> = []

    /// The transaction ids of the lines granted (or adopted: owned the same) to the job's user.
    var grantedTransactions: Set<String> {
        guard let lines = try? JSONValue(parsing: transactions).array else { return [] }
        return Set(lines.compactMap { ["granted", "adopted"].contains($0["outcome"]?.string) ? $0["transaction_id"]?.string : nil })
    }
}

/// The named arguments of `grant_purchases`.
/// One JSON object the script reads with `cjson.decode`; numbers travel as strings where Redis
/// stores them, because cjson reads numbers as doubles.
struct GrantPurchasesArguments {
    var ticket: String
    /// A part's own id: nothing is published (its client's ticket is told by `finish_part`).
    var part: String?
    /// The job stays in flight for the steps that follow (`acknowledge_job` acks it).
    var keep: Bool
    /// Numbers travel as strings where Redis stores them: cjson reads numbers as doubles.
    var now: String
    var channel: String
    var userID: String
    var environment: String
    /// The app the verified answer is for (on subscription records and their events).
    var bundleID: String? = nil
    var source: String
    /// `IAP_MAX_REFUNDS_PER_USER`; absent: no limit.
    var refundLimit: String?
    /// With a limit: the user's refunds counted in every bucket, read before the step.
    var refunds: String?
    /// `IAP_SHARING_POLICY`: `bind`, `transfer` or `share`; absent: a plain duplicate.
    var sharing: String?
    var purchases: [Line]
    /// When the subscriptions this step moves are re-checked next.
    var recheck: RecheckSchedule?
    /// A re-check's answer: the subscription's state as Apple says it now, applied after the
    /// purchases (in signed-time order, like a notification).
    var subscription: SubscriptionChange?
    /// The KEYS index of the answer's subscription record, and of its bucket's re-check schedule.
    var subscriptionKey: Int?
    var rechecksKey: Int?
    var subscribersKey: Int?
    /// A legacy receipt proving the job's subscriptions: kept on the records this user owns.
    var receipt: String?
    /// The KEYS index of the bucket's notify queue, when a purchase's `token_job` or `finish_job` may go there.
    var notifyQueue: Int?
    /// The time to live of an errand's ticket (s).
    var ticketTTL: String?
    /// Other users whose keys the step touches (user → `lifetime`, `subscriptions`, `purchases`: KEYS indexes).
    var others: [String: [String: Int]] = [:]

    /// A key's name in a line's `k` and its KEYS index. A list, not a dictionary: hashing the
    /// names into one and writing them out was about 16 thousand instructions a grant job.
    typealias Key = (name: StaticString, value: Int)

    struct Line {
        var transactionID: String
        var originalTransactionID: String
        var productID: String
        var quantity: String
        var unit: String?
        var outcome: String
        var reason: String?
        var appAccountToken: String?
        /// The Apple Account that bought it (`appTransactionId`), when Apple said.
        var appTransactionID: String?
        /// `1`: the user came on that Apple Account after `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT` others.
        var accountShared: String?
        var currency: String?
        /// The catalog's `daily_limit_per_user` for the product; absent: no cap.
        var dailyLimit: String?
        /// With a cap: `1` when the unit has its place in the user's window (`reserve_daily_grant`).
        var dailyReserved: String?
        var kind: String?
        /// Comma-separated.
        var entitlements: String?
        var expiresAt: String?
        var signedAt: String?
        /// `1`: pre-adoption, recorded with the event `adopted` (`Purchase.adopt`).
        var adopt: String? = nil
        /// A subscription's period: its price as a month's (`MonthlyPrice`), milliunits.
        var periodMRR: String? = nil
        /// What it cost and how it was sold, as name, value… (`InAppTransaction.saleFields`).
        var sale: [String] = []
        /// The notify job that sets the user's app account token at Apple, queued when this
        /// purchase is granted to the user (its ticket: `k.token_ticket`).
        var tokenJob: String?
        /// The notify job that finishes the consumable at Apple, queued when it is granted to the
        /// user (its ticket: `k.finish_ticket`).
        var finishJob: String? = nil
        /// The purchase's keys by name (claim, record, hold, refunded, owner, token_ticket,
        /// finish_ticket, subscription, rechecks, subscribers): KEYS indexes, each name once.
        var keys: [Key]

        /// The line as one object of the argument (its members in the order written).
        func write(into json: inout JSONWriter) {
            json.openObject()
            json.member("transaction_id", transactionID)
            json.member("original_transaction_id", originalTransactionID)
            json.member("product_id", productID)
            json.member("quantity", quantity)
            json.member("unit", unit)
            json.member("outcome", outcome)
            json.member("reason", reason)
            json.member("app_account_token", appAccountToken)
            json.member("app_transaction_id", appTransactionID)
            json.member("account_shared", accountShared)
            json.member("currency", currency)
            json.member("daily_limit", dailyLimit)
            json.member("daily_reserved", dailyReserved)
            json.member("kind", kind)
            json.member("entitlements", entitlements)
            json.member("expires_at", expiresAt)
            json.member("signed_at", signedAt)
            json.member("adopt", adopt)
            json.member("period_mrr", periodMRR)
            if !sale.isEmpty {
                json.name("sale")
                json.openArray()
                for item in sale { json.string(item) }
                json.closeArray()
            }
            json.member("token_job", tokenJob)
            json.member("finish_job", finishJob)
            json.member("k", fields: keys)
            json.closeObject()
        }
    }

    /// The script's argument: one JSON object, written straight into bytes (`JSONWriter`).
    var argument: String {
        var json = JSONWriter(capacity: 1024 + 512 * purchases.count)
        json.openObject()
        json.member("ticket", ticket)
        json.member("part", part)
        json.member("keep", flag: keep)
        json.member("now", now)
        json.member("channel", channel)
        json.member("user_id", userID)
        json.member("environment", environment)
        json.member("source", source)
        json.member("bundle_id", bundleID)
        json.member("refund_limit", refundLimit)
        json.member("refunds", refunds)
        json.member("sharing", sharing)
        json.name("purchases")
        json.openArray()
        for line in purchases { line.write(into: &json) }
        json.closeArray()
        if let recheck {
            json.name("recheck")
            recheck.write(into: &json)
        }
        json.member("subscription", value: subscription?.json)
        json.member("subscription_key", int: subscriptionKey)
        json.member("rechecks_key", int: rechecksKey)
        json.member("subscribers_key", int: subscribersKey)
        json.member("receipt", receipt)
        json.member("notify_queue", int: notifyQueue)
        json.member("ticket_ttl", ticketTTL)
        if !others.isEmpty {
            json.name("others")
            json.openObject()
            for (user, keys) in others {
                json.key(user)
                json.openObject()
                for (name, index) in keys {
                    json.key(name)
                    json.int(index)
                }
                json.closeObject()
            }
            json.closeObject()
        }
        json.closeObject()
        return json.text
    }
}

import AppleReceipt
import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// The purchase policy: what the dedupe stage decides alone (sandbox, currency), and what the
/// grant script counts (daily caps, refunds), holds and lets an operator release or reject once.
@Suite struct PurchasePolicyTests {
    static let keys = RedisKeys(prefix: "{t}iap")
    static let member = "grant:w1"

    /// Stores a ticket and puts its grant job (one purchase, unit = transaction id) in the grant
    /// worker's in-flight list, as the dedupe stage would have forwarded it.
    static func grantJob(
        _ store: PipelineStore, ticket: String, user: String = "u1", transaction: String, product: String = "gems",
        outcome: PurchaseOutcome = .pending, reason: String? = nil, dailyLimit: Int? = nil, refundLimit: Int? = nil,
        currency: String? = nil, appleAccount: String? = nil, appleAccountLimit: Int? = nil
    ) async throws -> (payload: String, job: Job) {
        var job = Job(ticket: ticket, userID: user, receiptData: "cmVjZWlwdA==", productID: nil, transactionID: nil, enqueuedAt: 1)
        _ = try await store.submit(job, receiptDigest: "d-\(ticket)", ttl: .seconds(3600))
        var bought = InAppTransaction(transactionID: transaction, productID: product)
        bought.appTransactionID = appleAccount
        let receipt = VerifiedReceipt(environment: "Production", bundleID: "b", transactions: [bought])
        var purchase = Purchase(
            transactionID: transaction, originalTransactionID: transaction, productID: product, quantity: 1, unit: transaction,
            outcome: outcome, reason: reason)
        purchase.dailyLimit = dailyLimit
        purchase.currency = currency
        job = job.movedToGrant([purchase], in: receipt, refundLimit: refundLimit, appleAccountLimit: appleAccountLimit)
        let payload = job.encoded()
        try await store.redis.send("LPUSH", keys.inflight(member: member), payload)
        return (payload, job)
    }

    static func grant(_ store: PipelineStore, _ job: (payload: String, job: Job), now: Int64 = 1000) async throws -> TicketStatus? {
        let (result, status) = try await store.grant(job.payload, member: member, job: job.job, now: now)
        #expect(result == .moved)
        return status
    }

    /// `grantJob` then `grant`.
    static func grantNew(
        _ store: PipelineStore, now: Int64 = 1000, ticket: String, user: String = "u1", transaction: String, product: String = "gems",
        dailyLimit: Int? = nil, refundLimit: Int? = nil
    ) async throws -> TicketStatus? {
        let job = try await grantJob(
            store, ticket: ticket, user: user, transaction: transaction, product: product, dailyLimit: dailyLimit, refundLimit: refundLimit)
        return try await grant(store, job, now: now)
    }

    // MARK: the grant script's counted rules

    /// The seeds' burst of small purchases: 20 grant steps racing for one user's daily cap of 3.
    @Test func twentyParallelGrantsAgainstACapOfThreeGrantExactlyThree() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            var jobs: [(payload: String, job: Job)] = []
            for index in 0..<20 {
                jobs.append(try await Self.grantJob(store, ticket: "T\(index)", transaction: "tx\(index)", dailyLimit: 3))
            }
            let statuses = try await withThrowingTaskGroup(of: TicketStatus?.self) { group in
                for job in jobs { group.addTask { try await Self.grant(store, job) } }
                return try await group.reduce(into: [TicketStatus?]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .granted }.count == 3)
            #expect(statuses.filter { $0 == .held }.count == 17)
            #expect(try await redis.send("ZCARD", Self.keys.dailyWindow(user: "u1", product: "gems")).int == 3)
            #expect(try await redis.send("ZCARD", Self.keys.holds).int == 17)
            let events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.filter { $0["event"] == "granted" }.count == 3)
            #expect(events.filter { $0["event"] == "held" && $0["reason"] == "daily_limit_exceeded" }.count == 17)
            let held = try await store.heldPurchases(limit: 100)
            #expect(held.count == 17 && held.allSatisfy { $0.status == "held" && $0.userID == "u1" && $0.reason == "daily_limit_exceeded" })
            // Another user and another product have their own windows.
            #expect(try await Self.grantNew(store, ticket: "U2", user: "u2", transaction: "o1", dailyLimit: 3) == .granted)
            #expect(try await Self.grantNew(store, ticket: "P2", transaction: "o2", product: "gold", dailyLimit: 3) == .granted)
        }
    }

    /// A capped unit that does not end granted (a duplicate, held by another rule) gives its place
    /// back; a redelivered job keeps the one place its unit has; the job is acked only at the end.
    @Test func aPlaceInTheDailyWindowIsKeptOnlyByAGrantedUnit() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let window = Self.keys.dailyWindow(user: "u1", product: "gems")
            #expect(try await Self.grantNew(store, ticket: "A", transaction: "a", dailyLimit: 2) == .granted)
            // The same purchase on another ticket: a duplicate, which takes no place.
            try await redis.send("SET", Self.keys.claim(unit: "a"), "A")
            #expect(try await Self.grantNew(store, ticket: "A2", transaction: "a", dailyLimit: 2) == .duplicate)
            try await redis.send("SET", Self.keys.claim(unit: "b"), "OTHER")
            #expect(try await Self.grantNew(store, ticket: "B", transaction: "b", dailyLimit: 2) == .duplicate)
            // Held by the refund limit: its place is given back too.
            try await redis.send("SET", Self.keys.refunds(user: "u1"), "5")
            #expect(try await Self.grantNew(store, ticket: "C", transaction: "c", dailyLimit: 2, refundLimit: 1) == .held)
            try await redis.send("DEL", Self.keys.refunds(user: "u1"))
            #expect(try await redis.send("ZRANGE", window, "0", "-1").array?.compactMap(\.string) == ["a"])
            // One place is left; a job run twice (redelivered) takes it once.
            let job = try await Self.grantJob(store, ticket: "D", transaction: "d", dailyLimit: 2)
            #expect(try await Self.grant(store, job) == .granted)
            #expect(try await redis.send("LLEN", Self.keys.inflight(member: Self.member)).int == 0)
            try await redis.send("LPUSH", Self.keys.inflight(member: Self.member), job.payload)
            #expect(try await Self.grant(store, job) == .granted)
            #expect(try await redis.send("ZCARD", window).int == 2)
            #expect(try await Self.grantNew(store, ticket: "E", transaction: "e", dailyLimit: 2) == .held)
            #expect(try await redis.send("ZCARD", window).int == 2)
        }
    }

    /// The window is the last 24 hours: a grant a day and a millisecond old no longer counts.
    @Test func theDailyWindowRolls() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let day: Int64 = 86_400_000
            let first = try await Self.grantNew(store, now: 10_000, ticket: "A", transaction: "a", dailyLimit: 1)
            let sameDay = try await Self.grantNew(store, now: 10_000 + day - 1, ticket: "B", transaction: "b", dailyLimit: 1)
            let nextDay = try await Self.grantNew(store, now: 10_001 + day, ticket: "C", transaction: "c", dailyLimit: 1)
            #expect(first == .granted && sameDay == .held && nextDay == .granted)
            let ttl = try await redis.send("PTTL", Self.keys.dailyWindow(user: "u1", product: "gems")).int ?? 0
            #expect(ttl > day - 60_000)
        }
    }

    /// From `IAP_MAX_REFUNDS_PER_USER` refunds on, a user's new purchases wait for an operator.
    @Test func aUserWithTooManyRefundsHasNewPurchasesHeld() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await redis.send("SET", Self.keys.refunds(user: "u1"), "1")
            #expect(try await Self.grantNew(store, ticket: "A", transaction: "a", refundLimit: 2) == .granted)
            try await redis.send("INCR", Self.keys.refunds(user: "u1"))
            #expect(try await Self.grantNew(store, ticket: "B", transaction: "b", refundLimit: 2) == .held)
            let hold = try #require(try await store.hold(unit: "b"))
            #expect(hold.reason == "refund_limit_exceeded" && hold.ticket == "B")
            // Without the setting, nobody is held for refunds.
            #expect(try await Self.grantNew(store, ticket: "C", transaction: "c") == .granted)
        }
    }

    /// The seeds' starter-pack farm: one Apple Account buying for many game accounts. Under a
    /// limit of 2 the third user on that account has the purchase held (`apple_account_shared`);
    /// the first two keep their places whatever comes after, and another account is untouched.
    @Test func aThirdUserOnOneAppleAccountHasThePurchaseHeld() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            func buy(_ ticket: String, _ user: String, on account: String?, limit: Int? = 2) async throws -> TicketStatus? {
                let job = try await Self.grantJob(
                    store, ticket: ticket, user: user, transaction: "t-\(ticket)", appleAccount: account, appleAccountLimit: limit)
                return try await Self.grant(store, job)
            }
            #expect(try await buy("A", "u1", on: "7001") == .granted)
            #expect(try await buy("B", "u2", on: "7001") == .granted)
            #expect(try await buy("C", "u3", on: "7001") == .held)
            let hold = try #require(try await store.hold(unit: "t-C"))
            #expect(hold.reason == "apple_account_shared" && hold.userID == "u3")
            // The first users keep their places; the third stays the third.
            #expect(try await buy("D", "u1", on: "7001") == .granted)
            #expect(try await buy("E", "u3", on: "7001") == .held)
            // Another Apple Account, no account named, or no limit: nothing held.
            #expect(try await buy("F", "u3", on: "7002") == .granted)
            #expect(try await buy("G", "u4", on: nil) == .granted)
            // Without a limit the user is still seated (a purchase Apple reports without a token
            // finds the account's one user; RESCIND_CONSENT finds its users), and nothing is held.
            #expect(try await buy("H", "u5", on: "7001", limit: nil) == .granted)
            #expect(try await redis.send("HGET", Self.keys.appleAccount("7001"), "joined").string == "4")
            #expect(try await redis.send("HGET", Self.keys.appleAccount("7001"), "u:u5").string == "4")
        }
    }

    // MARK: holds and the operator's decision

    /// Held by the dedupe stage (currency), released once: granted as the grant stage would have,
    /// audited, the ticket following; a second decision and a redelivered grant job change nothing.
    @Test func aHeldPurchaseIsReleasedOnceAndItsTicketFollows() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let job = try await Self.grantJob(store, ticket: "T", transaction: "t1", outcome: .held, reason: "currency_not_allowed", currency: "RUB")
            #expect(try await Self.grant(store, job) == .held)
            let heldTicket = try #require(try await store.ticket("T"))
            #expect(heldTicket.status == .held && !heldTicket.status.isTerminal)
            #expect(heldTicket.transactions.map(\.outcome) == [.held] && heldTicket.transactions.first?.reason == "currency_not_allowed")
            #expect(try await redis.send("EXISTS", Self.keys.grant(unit: "t1")).int == 0)
            #expect(try await redis.send("GET", Self.keys.claim(unit: "t1")).string == "T")
            let hold = try #require(try await store.hold(unit: "t1"))
            #expect(hold.status == "held" && hold.currency == "RUB" && hold.heldAt == 1000)

            #expect(try await store.releaseHeld(unit: "t1", by: "alice", note: "checked the card", now: 2000) == .decided("released"))
            let record = try await redis.send("HGETALL", Self.keys.grant(unit: "t1")).stringDictionary
            #expect(record["ticket"] == "T" && record["user_id"] == "u1" && record["granted_at"] == "2000" && record["released_by"] == "alice")
            #expect(try await redis.send("GET", Self.keys.owner(originalTransactionID: "t1")).string == "u1")
            let events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.map { $0["event"] } == ["held", "released"])
            #expect(events[1]["source"] == "operator" && events[1]["operator"] == "alice" && events[1]["hold_reason"] == "currency_not_allowed")
            let released = try #require(try await store.ticket("T"))
            #expect(released.status == .granted && released.transactions.map(\.outcome) == [.granted] && released.reason == nil)
            let decided = try #require(try await store.hold(unit: "t1"))
            #expect(decided.status == "released" && decided.decidedBy == "alice" && decided.decidedAt == 2000 && decided.note == "checked the card")
            #expect(try await store.heldPurchases(limit: 10).isEmpty)

            #expect(try await store.releaseHeld(unit: "t1", by: "bob") == .alreadyDecided("released"))
            #expect(try await store.rejectHeld(unit: "t1", by: "bob") == .alreadyDecided("released"))
            #expect(try await store.releaseHeld(unit: "nope", by: "bob") == .notFound)
            // The grant job delivered again (a worker died before its ack): granted, nothing new.
            try await redis.send("LPUSH", Self.keys.inflight(member: Self.member), job.payload)
            #expect(try await Self.grant(store, job) == .granted)
            #expect(try await fulfilmentEvents(redis, Self.keys).count == 2)
        }
    }

    /// Rejected: never granted, to anyone (the claim stays with its ticket), audited once.
    @Test func aRejectedHoldIsNeverGranted() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let job = try await Self.grantJob(store, ticket: "T", transaction: "t1", outcome: .held, reason: "currency_unknown")
            #expect(try await Self.grant(store, job) == .held)
            #expect(try await store.rejectHeld(unit: "t1", by: "alice", now: 2000) == .decided("rejected"))
            let ticket = try #require(try await store.ticket("T"))
            #expect(ticket.status == .rejected && ticket.reason == "currency_unknown")
            #expect(ticket.transactions.map(\.outcome) == [.rejected] && ticket.transactions.first?.reason == "currency_unknown")
            #expect(try await fulfilmentEvents(redis, Self.keys).map { $0["event"] } == ["held", "rejected"])
            #expect(try await store.releaseHeld(unit: "t1", by: "mallory") == .alreadyDecided("rejected"))
            #expect(try await redis.send("EXISTS", Self.keys.grant(unit: "t1")).int == 0)
            // Redelivered: still rejected. The same purchase from another account: a duplicate.
            try await redis.send("LPUSH", Self.keys.inflight(member: Self.member), job.payload)
            #expect(try await Self.grant(store, job) == .rejected)
            #expect(try await Self.grantNew(store, ticket: "X", user: "u2", transaction: "t1") == .duplicate)
            #expect(try await fulfilmentEvents(redis, Self.keys).count == 2)
        }
    }

    /// Apple refunded it while it waited: releasing it grants nothing and says why.
    @Test func aPurchaseRefundedWhileHeldIsRejectedOnRelease() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            #expect(try await Self.grantNew(store, ticket: "T", transaction: "t1", dailyLimit: 1) == .granted)
            #expect(try await Self.grantNew(store, ticket: "U", transaction: "t2", dailyLimit: 1) == .held)
            // What revoke_grant does for a unit nobody was granted yet.
            try await redis.send("SET", Self.keys.refunded(unit: "t2"), "1500")
            #expect(try await store.releaseHeld(unit: "t2", by: "alice", now: 2000) == .decided("rejected"))
            let ticket = try #require(try await store.ticket("U"))
            #expect(ticket.status == .rejected && ticket.reason == "refunded")
            #expect(try await redis.send("EXISTS", Self.keys.grant(unit: "t2")).int == 0)
            #expect(try await fulfilmentEvents(redis, Self.keys).map { $0["event"] } == ["granted", "held", "rejected"])
        }
    }

    /// A consumable Apple refunded in part while it waited: releasing it grants it and takes the
    /// refunded items back in the same step, counted as the refund's share.
    @Test func aPurchaseRefundedInPartWhileHeldKeepsTheRestOnRelease() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            #expect(try await Self.grantNew(store, ticket: "T", transaction: "t1", dailyLimit: 1) == .granted)
            #expect(try await Self.grantNew(store, ticket: "U", transaction: "t2", dailyLimit: 1) == .held)
            try await redis.send("HSET", Self.keys.hold(unit: "t2"), "quantity", "3")
            // What revoke_grant remembers of a consumable's refund in part before its grant.
            try await redis.send("SET", Self.keys.refunded(unit: "t2"), "1500:33333")
            #expect(try await store.releaseHeld(unit: "t2", by: "alice", now: 2000) == .decided("released"))
            let record = try await redis.send("HGETALL", Self.keys.grant(unit: "t2")).stringDictionary
            #expect(record["quantity"] == "3" && record["revoked_quantity"] == "1" && record["revoked_at"] == nil)
            let events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.map { $0["event"] } == ["granted", "held", "released", "revoked"])
            #expect(events.last?["revoked_quantity"] == "1" && events.last?["user_id"] == "u1")
            #expect(try await redis.send("GET", Self.keys.refundsProrated(user: "u1")).string == "33333")
            #expect(try await redis.send("EXISTS", Self.keys.refunded(unit: "t2")).int == 0)
        }
    }

    /// A ticket of two purchases, one granted and one held, stays `held` until the held one is
    /// decided, then shows what they add up to.
    @Test func aTicketIsHeldWhileAnyOfItsPurchasesIs() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            var job = try await Self.grantJob(store, ticket: "T", transaction: "a")
            try await redis.send("DEL", Self.keys.inflight(member: Self.member))
            var held = Purchase(
                transactionID: "b", originalTransactionID: "b", productID: "gems", quantity: 1, unit: "b", outcome: .held,
                reason: "currency_not_allowed")
            held.currency = "RUB"
            var claimed = try #require(job.job.claimed)
            claimed.purchases.append(held)
            job.job.work = .grant(claimed)
            job.payload = job.job.encoded()
            try await redis.send("LPUSH", Self.keys.inflight(member: Self.member), job.payload)
            #expect(try await Self.grant(store, job) == .held)
            #expect(try await store.ticket("T")?.transactions.map(\.outcome) == [.granted, .held])
            #expect(try await store.rejectHeld(unit: "b", by: "alice") == .decided("rejected"))
            let ticket = try #require(try await store.ticket("T"))
            #expect(ticket.status == .granted && ticket.transactions.map(\.outcome) == [.granted, .rejected])
        }
    }

    // MARK: the dedupe stage's own rules

    static func job(user: String = "u1", currency: String? = nil, environment: String = "Production", _ transactions: [InAppTransaction]) -> (Job, VerifiedReceipt) {
        let receipt = VerifiedReceipt(environment: environment, bundleID: "b", transactions: transactions)
        let job = Job(
            ticket: "T", stage: .dedupe, userID: user, work: .dedupe(Job.Verified(receipt: receipt, currency: currency)), enqueuedAt: 1)
        return (job, receipt)
    }

    static func signed(_ id: String, currency: String?) -> InAppTransaction {
        var transaction = InAppTransaction(transactionID: id, productID: "gems")
        transaction.currency = currency
        return transaction
    }

    static let catalog = ProductCatalog(products: ["gems": .consumable, "pack": .nonConsumable], dailyLimits: ["gems": 5])

    /// Apple's signed currency decides; the client's word counts only where Apple gives none.
    @Test func dedupeHoldsCurrenciesOutsideTheListAndUnknownOnes() {
        let handler = DedupeHandler(catalog: Self.catalog, policy: PurchasePolicy(currencies: ["USD", "EUR"]))
        let (job, receipt) = Self.job(currency: "USD", [
            Self.signed("1", currency: "RUB"), Self.signed("2", currency: "usd"), Self.signed("3", currency: nil),
        ])
        let purchases = handler.purchases(for: job, in: receipt)
        #expect(purchases.map(\.outcome) == [.held, .pending, .pending])
        #expect(purchases.map(\.reason) == ["currency_not_allowed", nil, nil])
        #expect(purchases.map(\.currency) == ["RUB", "usd", "USD"])
        #expect(purchases.allSatisfy { $0.unit != nil && $0.isClaimed && $0.dailyLimit == 5 })
        let (unknown, legacy) = Self.job(currency: nil, [InAppTransaction(transactionID: "4", productID: "pack")])
        let held = handler.purchases(for: unknown, in: legacy)
        #expect(held.map(\.outcome) == [.held] && held.first?.reason == "currency_unknown" && held.first?.dailyLimit == nil)
        // No list: any currency, known or not.
        #expect(DedupeHandler(catalog: Self.catalog).purchases(for: unknown, in: legacy).map(\.outcome) == [.pending])
    }

    @Test func dedupeRejectsSandboxPurchasesUnlessTheUserMayUseTheSandbox() {
        let tx = [InAppTransaction(transactionID: "1", productID: "gems")]
        let deny = DedupeHandler(catalog: Self.catalog, policy: PurchasePolicy(sandbox: .deny))
        let (job, sandbox) = Self.job(environment: "Sandbox", tx)
        let rejected = deny.purchases(for: job, in: sandbox)
        #expect(rejected.map(\.outcome) == [.rejected] && rejected.first?.reason == "sandbox_not_allowed" && rejected.first?.unit == nil)
        #expect(deny.purchases(for: job, in: Self.job(tx).1).map(\.outcome) == [.pending])
        let testers = DedupeHandler(catalog: Self.catalog, policy: PurchasePolicy(sandbox: .users(["reviewer"])))
        #expect(testers.purchases(for: Self.job(user: "reviewer", environment: "Sandbox", tx).0, in: sandbox).map(\.outcome) == [.pending])
        #expect(testers.purchases(for: job, in: sandbox).map(\.outcome) == [.rejected])
    }
}

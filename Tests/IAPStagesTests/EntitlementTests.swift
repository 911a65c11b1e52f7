import AppleJWS
import AppleReceipt
import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// What a grant gives beyond itself: a non-consumable's entitlements for life, a subscription's
/// record (in signed-time order, one renewal event per later period, entitlement events when its
/// status or product changes), and what `entitlements(user:)` reads from them.
@Suite struct EntitlementTests {
    static let keys = RedisKeys(prefix: "{t}iap")
    static let member = "grant:w1"
    static let catalog = PipelineHarness.catalog
    static let day: Int64 = 86_400_000

    /// Grants one purchase as the grant stage would, the dedupe stage having annotated it from the catalog.
    static func grant(
        _ store: PipelineStore, ticket: String, user: String = "u1", transaction: String, original: String? = nil,
        product: String, expiresAt: Int64? = nil, signedAt: Int64? = nil, sharing: SharingPolicy = .bind, now: Int64
    ) async throws -> TicketStatus? {
        var job = Job(ticket: ticket, userID: user, receiptData: "cmVjZWlwdA==", productID: nil, transactionID: nil, enqueuedAt: 1)
        _ = try await store.submit(job, receiptDigest: "d-\(ticket)", ttl: .seconds(3600))
        var transaction = InAppTransaction(
            transactionID: transaction, originalTransactionID: original, productID: product,
            webOrderLineItemID: catalog.products[product] == .autoRenewable ? "w-\(transaction)" : nil)
        transaction.expiresDateMs = expiresAt.map(String.init)
        transaction.signedDateMs = signedAt.map(String.init)
        let receipt = VerifiedReceipt(environment: "Production", bundleID: "b", transactions: [transaction])
        job = job.movedToDedupe(with: receipt)
        job = job.movedToGrant(DedupeHandler(catalog: catalog).purchases(for: job, in: receipt), in: receipt, sharing: sharing)
        let payload = job.encoded()
        try await store.redis.send("LPUSH", keys.inflight(member: member), payload)
        let (result, status) = try await store.grant(payload, member: member, job: job, now: now)
        #expect(result == .moved)
        return status
    }

    @Test func aNonConsumableEntitlesItsUserUntilRevoked() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let now: Int64 = 1_800_000_000_000
            #expect(try await Self.grant(store, ticket: "T", transaction: "p1", product: "level.pack", now: now) == .granted)
            let owned = try await store.entitlements(user: "u1", catalog: Self.catalog, now: now)
            #expect(owned.entitlements == [.init(
                entitlement: "level_pack", productID: "level.pack", status: "active", expiresAt: nil, originalTransactionID: "p1")])
            #expect(try await store.entitlements(user: "u2", catalog: Self.catalog, now: now).entitlements.isEmpty)
            try await redis.send("HSET", Self.keys.grant(unit: "p1"), "revoked_at", String(now))
            #expect(try await store.entitlements(user: "u1", catalog: Self.catalog, now: now).entitlements.isEmpty)
        }
    }

    /// Period 1 subscribes, period 2 renews (event `renewed`, no entitlement change), a period
    /// granted late does not move the record back, and the entitlements end with the last period.
    @Test func aSubscriptionRenewsOncePerPeriodAndEndsWithItsLastPeriod() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let t0: Int64 = 1_800_000_000_000
            let first = try await Self.grant(
                store, ticket: "A", transaction: "s1", product: "vip.monthly", expiresAt: t0 + 30 * Self.day, signedAt: t0, now: t0)
            #expect(first == .granted)
            var record = try await redis.send("HGETALL", Self.keys.subscription(originalTransactionID: "s1")).stringDictionary
            #expect(record["status"] == "active" && record["user_id"] == "u1" && record["expires_at"] == String(t0 + 30 * Self.day))
            var events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.map { $0["event"] } == ["granted", "entitlement_changed", "entitlement_changed"])
            #expect(Set(events.dropFirst().compactMap { $0["entitlement"] }) == ["premium", "no_ads"])
            #expect(events[1]["status"] == "active" && events[1]["user_id"] == "u1" && events[1]["original_transaction_id"] == "s1")
            let active = try await store.entitlements(user: "u1", catalog: Self.catalog, now: t0 + 1)
            #expect(active.entitlements.map(\.entitlement) == ["no_ads", "premium"])
            #expect(active.entitlements.allSatisfy { $0.status == "active" && $0.expiresAt != nil })

            let renewed = try await Self.grant(
                store, ticket: "B", transaction: "s2", original: "s1", product: "vip.monthly", expiresAt: t0 + 60 * Self.day,
                signedAt: t0 + 30 * Self.day, now: t0 + 30 * Self.day)
            #expect(renewed == .granted)
            events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.map { $0["event"] } == ["granted", "entitlement_changed", "entitlement_changed", "renewed"])
            record = try await redis.send("HGETALL", Self.keys.subscription(originalTransactionID: "s1")).stringDictionary
            #expect(record["latest_transaction_id"] == "s2" && record["expires_at"] == String(t0 + 60 * Self.day))

            // Period 1 again, through another receipt of a later day (a new ticket, but the same unit: a duplicate).
            #expect(try await Self.grant(
                store, ticket: "C", transaction: "s1", product: "vip.monthly", expiresAt: t0 + 30 * Self.day, now: t0 + 40 * Self.day)
                == .duplicate)
            // A period granted late (its transaction never reached us before) does not move the record back.
            #expect(try await Self.grant(
                store, ticket: "D", transaction: "s0", original: "s1", product: "vip.monthly", expiresAt: t0 + 20 * Self.day,
                now: t0 + 41 * Self.day) == .granted)
            record = try await redis.send("HGETALL", Self.keys.subscription(originalTransactionID: "s1")).stringDictionary
            #expect(record["latest_transaction_id"] == "s2")
            // Past the last period's end, nothing is active any more (until a renewal is known).
            #expect(try await store.entitlements(user: "u1", catalog: Self.catalog, now: t0 + 60 * Self.day + 1).entitlements.isEmpty)
        }
    }

    /// News older than what made the record changes nothing; a period that has already ended
    /// makes an `expired` subscription and its event.
    @Test func olderNewsIsIgnoredAndAnEndedPeriodIsExpired() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let t0: Int64 = 1_800_000_000_000
            try await redis.send(
                "HSET", Self.keys.subscription(originalTransactionID: "s1"), "user_id", "u1", "product_id", "vip.monthly",
                "status", "revoked", "event_at", String(t0 + 10), "entitlements", "premium,no_ads")
            #expect(try await Self.grant(
                store, ticket: "A", transaction: "s1", product: "vip.monthly", expiresAt: t0 + Self.day, signedAt: t0, now: t0 + 20)
                == .granted)
            #expect(try await redis.send("HGET", Self.keys.subscription(originalTransactionID: "s1"), "status").string == "revoked")
            #expect(try await fulfilmentEvents(redis, Self.keys).map { $0["event"] } == ["granted"])

            #expect(try await Self.grant(
                store, ticket: "B", user: "u2", transaction: "e1", product: "vip.monthly", expiresAt: t0 - Self.day, signedAt: t0,
                now: t0) == .granted)
            let record = try await redis.send("HGETALL", Self.keys.subscription(originalTransactionID: "e1")).stringDictionary
            #expect(record["status"] == "expired")
            // It never entitled anyone to anything: only its grant is news.
            #expect(try await fulfilmentEvents(redis, Self.keys).map { $0["event"] } == ["granted", "granted"])
            #expect(try await store.entitlements(user: "u2", catalog: Self.catalog, now: t0).entitlements.isEmpty)
        }
    }

    /// A change of product within the group (an upgrade keeps the original transaction id): the
    /// old product's entitlements the new one lacks end, the new product's are announced.
    @Test func anUpgradeEndsTheOldProductsEntitlements() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let t0: Int64 = 1_800_000_000_000
            _ = try await Self.grant(
                store, ticket: "A", transaction: "s1", product: "vip.monthly", expiresAt: t0 + 30 * Self.day, signedAt: t0, now: t0)
            #expect(try await Self.grant(
                store, ticket: "B", transaction: "s2", original: "s1", product: "vip.yearly", expiresAt: t0 + 365 * Self.day,
                signedAt: t0 + Self.day, now: t0 + Self.day) == .granted)
            let events = try await fulfilmentEvents(redis, Self.keys).dropFirst(3).map { "\($0["event"]!) \($0["entitlement"] ?? "-") \($0["status"] ?? "-")" }
            #expect(events == ["renewed - -", "entitlement_changed no_ads ended", "entitlement_changed premium active"])
            let now = try await store.entitlements(user: "u1", catalog: Self.catalog, now: t0 + 2 * Self.day)
            #expect(now.entitlements.map { "\($0.entitlement) \($0.productID)" } == ["premium vip.yearly"])
        }
    }

    /// Submits ticket `T` for `u1` and runs its grant step with `purchase` (held by the dedupe stage's word) at time 5.
    static func grantHeld(_ purchase: Purchase, _ store: PipelineStore, _ redis: RedisClient) async throws -> TicketStatus? {
        var job = Job(ticket: "T", userID: "u1", receiptData: "cmVjZWlwdA==", productID: nil, transactionID: nil, enqueuedAt: 1)
        _ = try await store.submit(job, receiptDigest: "d-T", ttl: .seconds(3600))
        job = job.movedToGrant([purchase], in: VerifiedReceipt(environment: "Production", bundleID: "b", transactions: []))
        try await redis.send("LPUSH", Self.keys.inflight(member: Self.member), job.encoded())
        return try await store.grant(job.encoded(), member: Self.member, job: job, now: 5).1
    }

    /// A held non-consumable gives its entitlements once an operator releases it.
    @Test func aReleasedNonConsumableEntitlesItsUser() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            var purchase = Purchase(
                transactionID: "p1", originalTransactionID: "p1", productID: "level.pack", quantity: 1, unit: "p1", outcome: .held,
                reason: "currency_unknown")
            purchase.kind = "non_consumable"
            let status = try await Self.grantHeld(purchase, store, redis)
            #expect(status == .held)
            #expect(try await store.entitlements(user: "u1", catalog: Self.catalog, now: 6).entitlements.isEmpty)
            #expect(try await store.releaseHeld(unit: "p1", by: "alice", now: 7) == .decided("released"))
            #expect(try await store.entitlements(user: "u1", catalog: Self.catalog, now: 8).entitlements.map(\.entitlement) == ["level_pack"])
        }
    }

    /// A subscription held, then released: its period's price and currency go on its record and it
    /// counts as a subscriber, as a period granted at once would.
    @Test func aReleasedSubscriptionCountsAsASubscriberWithItsPrice() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            var purchase = Purchase(
                transactionID: "s1", originalTransactionID: "s1", productID: "vip.monthly", quantity: 1, unit: "s1", outcome: .held,
                reason: "daily_limit")
            purchase.kind = "auto_renewable"
            purchase.entitlements = ["premium"]
            purchase.expiresAt = 1000 + 30 * Self.day
            var transaction = InAppTransaction(transactionID: "s1", originalTransactionID: "s1", productID: "vip.monthly")
            transaction.purchaseDateMs = "1000"
            transaction.expiresDateMs = String(1000 + 30 * Self.day)
            (transaction.price, transaction.currency, transaction.storefront) = ("9990", "USD", "USA")
            purchase.transaction = transaction
            let status = try await Self.grantHeld(purchase, store, redis)
            #expect(status == .held)
            #expect(try await redis.send("HLEN", Self.keys.subscribers).int == 0)
            #expect(try await store.releaseHeld(unit: "s1", by: "alice", now: 7) == .decided("released"))
            let counted = try await redis.send("HGETALL", Self.keys.subscribers).stringDictionary
            #expect(counted == ["active|Production|USA|USD|vip.monthly": "1", "mrr|Production|USA|USD|vip.monthly": "9990"], "\(counted)")
        }
    }

    /// Accepts a notification job and moves it into the notifier's in-flight list.
    static func notificationJob(_ store: PipelineStore, _ ticket: String) async throws -> (String, Job) {
        let job = NotificationScriptTests.notificationJob(ticket, type: "EXPIRED", uuid: "U-\(ticket)")
        let payload = try await NotificationScriptTests.held(store, job)
        return (payload, job)
    }

    /// `apply_subscription_notification`: in signed-time order, with the entitlement events, kept on the history.
    @Test func aNotificationMovesASubscriptionOnlyWithNewerNews() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let t0: Int64 = 1_800_000_000_000
            _ = try await Self.grant(
                store, ticket: "A", transaction: "s1", product: "vip.monthly", expiresAt: t0 + 30 * Self.day, signedAt: t0, now: t0)
            func change(_ status: String?, signedAt: Int64, grace: Int64? = nil, autoRenew: Int? = nil) -> SubscriptionChange {
                SubscriptionChange(
                    originalTransactionID: "s1", productID: "vip.monthly", status: status, expiresAt: t0 + 30 * Self.day,
                    graceExpiresAt: grace, signedAt: signedAt, cause: "notification:TEST", transactionID: "s1",
                    entitlements: ["premium", "no_ads"], environment: "Production", autoRenew: autoRenew)
            }
            var (payload, job) = try await Self.notificationJob(store, "N1")
            var (moved, result) = try await store.applySubscriptionNotification(
                payload, member: NotificationScriptTests.member, job: job,
                change: change("grace_period", signedAt: t0 + 30 * Self.day, grace: t0 + 46 * Self.day), entry: "e1",
                now: t0 + 30 * Self.day)
            #expect(moved == .moved && result == "applied")
            let grace = try await store.entitlements(user: "u1", catalog: Self.catalog, now: t0 + 40 * Self.day)
            #expect(grace.entitlements.map { "\($0.entitlement) \($0.status)" } == ["no_ads grace_period", "premium grace_period"])
            #expect(try await store.ticket("N1")?.result == "applied")
            #expect(try await redis.send("LRANGE", Self.keys.notifications(originalTransactionID: "s1"), "0", "-1").array?.count == 1)

            // Older news (signed before the grace period began) changes nothing.
            (payload, job) = try await Self.notificationJob(store, "N2")
            (moved, result) = try await store.applySubscriptionNotification(
                payload, member: NotificationScriptTests.member, job: job, change: change("expired", signedAt: t0 + Self.day), entry: "e2")
            #expect(result == "stale")
            #expect(try await redis.send("HGET", Self.keys.subscription(originalTransactionID: "s1"), "status").string == "grace_period")

            // Auto-renew turned off: the status stays, the flag changes.
            (payload, job) = try await Self.notificationJob(store, "N3")
            (_, result) = try await store.applySubscriptionNotification(
                payload, member: NotificationScriptTests.member, job: job, change: change(nil, signedAt: t0 + 31 * Self.day, autoRenew: 0),
                entry: "e3")
            let record = try await redis.send("HGETALL", Self.keys.subscription(originalTransactionID: "s1")).stringDictionary
            #expect(result == "applied" && record["status"] == "grace_period" && record["auto_renew"] == "0")

            (payload, job) = try await Self.notificationJob(store, "N4")
            (_, result) = try await store.applySubscriptionNotification(
                payload, member: NotificationScriptTests.member, job: job, change: change("expired", signedAt: t0 + 47 * Self.day),
                entry: "e4", now: t0 + 47 * Self.day)
            #expect(result == "applied")
            let tail = try await fulfilmentEvents(redis, Self.keys).suffix(3).map { "\($0["event"]!) \($0["entitlement"] ?? "-") \($0["status"] ?? "-")" }
            #expect(Set(tail) == ["entitlement_changed premium expired", "entitlement_changed no_ads expired", "expired - -"])
            #expect(try await store.entitlements(user: "u1", catalog: Self.catalog, now: t0 + 40 * Self.day).entitlements.isEmpty)

            // A subscription nobody was granted: nothing to apply.
            (payload, job) = try await Self.notificationJob(store, "N5")
            var unknown = change("expired", signedAt: t0)
            unknown.originalTransactionID = "nobody"
            (_, result) = try await store.applySubscriptionNotification(
                payload, member: NotificationScriptTests.member, job: job, change: unknown, entry: "e5")
            #expect(result == "unknown_subscription")
            #expect(try await redis.send("EXISTS", Self.keys.subscription(originalTransactionID: "nobody")).int == 0)
        }
    }

    /// `IAP_SHARING_POLICY` when a second account proves a purchase the first was granted.
    @Test(arguments: SharingPolicy.allCases)
    func anotherAccountProvingAnOwnedPurchaseFollowsTheSharingPolicy(_ sharing: SharingPolicy) async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let t0: Int64 = 1_800_000_000_000
            #expect(try await Self.grant(store, ticket: "A", user: "alice", transaction: "p1", product: "level.pack", now: t0) == .granted)
            #expect(try await Self.grant(
                store, ticket: "S", user: "alice", transaction: "s1", product: "vip.monthly", expiresAt: t0 + Self.day, signedAt: t0,
                now: t0) == .granted)
            // Bob restores both on his device (new transaction ids, same originals).
            let pack = try await Self.grant(
                store, ticket: "B", user: "bob", transaction: "p2", original: "p1", product: "level.pack", sharing: sharing, now: t0 + 1)
            let sub = try await Self.grant(
                store, ticket: "C", user: "bob", transaction: "s1", product: "vip.monthly", expiresAt: t0 + Self.day, signedAt: t0,
                sharing: sharing, now: t0 + 1)
            let ticket = try #require(try await store.ticket("B"))
            let alice = try await store.entitlements(user: "alice", catalog: Self.catalog, now: t0 + 2).entitlements.map(\.entitlement)
            let bob = try await store.entitlements(user: "bob", catalog: Self.catalog, now: t0 + 2).entitlements.map(\.entitlement)
            let events = try await fulfilmentEvents(redis, Self.keys).dropFirst(4).map { "\($0["event"]!) \($0["user_id"]!) \($0["entitlement"] ?? $0["revocation_reason"] ?? "-")" }
            switch sharing {
            case .bind:
                #expect(pack == .duplicate && sub == .duplicate && ticket.transactions.first?.reason == "owned_by_another_account")
                #expect(alice == ["level_pack", "no_ads", "premium"] && bob.isEmpty && events.isEmpty)
            case .transfer:
                #expect(pack == .granted && sub == .granted)
                #expect(alice.isEmpty && bob == ["level_pack", "no_ads", "premium"])
                #expect(try await redis.send("GET", Self.keys.owner(originalTransactionID: "p1")).string == "bob")
                #expect(try await redis.send("HGET", Self.keys.grant(unit: "p1"), "transferred_from").string == "alice")
                #expect(events.prefix(4) == ["revoked alice transferred", "granted bob -", "entitlement_changed alice level_pack",
                                             "entitlement_changed bob level_pack"])
            case .share:
                #expect(pack == .duplicate && sub == .duplicate && ticket.transactions.first?.reason == "shared")
                #expect(alice == ["level_pack", "no_ads", "premium"] && bob == ["level_pack", "no_ads", "premium"])
                #expect(events.allSatisfy { $0.hasPrefix("entitlement_changed bob") } && events.count == 3)
            }
            // A consumable is never shared or transferred: granted once, ever.
            #expect(try await Self.grant(store, ticket: "G1", user: "alice", transaction: "g1", product: "gold.100", now: t0) == .granted)
            #expect(try await Self.grant(
                store, ticket: "G2", user: "bob", transaction: "g1", product: "gold.100", sharing: sharing, now: t0) == .duplicate)
            #expect(try await redis.send("HGET", Self.keys.grant(unit: "g1"), "user_id").string == "alice")
        }
    }
}

import Foundation
import IAPOperations
import IAPStages
import PipelineCore
import RedisClient
import TestSupport
import Testing

/// `grant_for_a_time` and `end_timed_grant` on their own, on a cluster node that refuses
/// undeclared keys: a grant is made once per id, shows in the entitlements until its end beside a
/// purchase of the same entitlement, and ends once, at its end, whichever process sweeps.
@Suite struct TimedGrantTests {
    static let keys = RedisKeys(prefix: "{t}iap")
    static let catalog = ProductCatalog(
        products: ["vip.monthly": .autoRenewable, "level.pack": .nonConsumable],
        entitlements: ["vip.monthly": ["premium"], "level.pack": ["level_pack"]])
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_800_000_000_000

    static func order(_ id: String, days: Int64 = 7, reason: String = "outage compensation") -> TimedGrantOrder {
        TimedGrantOrder(grantID: id, entitlement: "premium", duration: .seconds(days * 86_400), reason: reason)
    }

    @Test func aGrantIsMadeOnceShowsUntilItsEndAndEndsOnceByItself() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let grant = try Self.order("comp-1").grant(catalog: Self.catalog, source: "api", by: "backend-1", now: Self.start)
            #expect(grant.until == Self.start + 7 * Self.day)
            #expect(try await store.grantForATime(user: "p1", grant: grant) == .granted(grant))
            #expect(try await store.grantForATime(user: "p1", grant: grant) == .seenBefore(grant))
            var other = try Self.order("comp-1", days: 8).grant(catalog: Self.catalog, source: "api", by: "backend-1", now: Self.start)
            guard case .idTaken = try await store.grantForATime(user: "p1", grant: other) else {
                Issue.record("another grant under a taken id was made")
                return
            }
            // Another user's id is their own.
            other.grantID = "comp-1"
            #expect(try await store.grantForATime(user: "p2", grant: other) == .granted(other))

            // Beside a purchase of the same entitlement, until its end.
            _ = try await redis.send("SADD", Self.keys.lifetime(user: "p1"), "lp1")
            _ = try await redis.send("HSET", Self.keys.grant(unit: "lp1", originalTransactionID: "lp1"), "product_id", "level.pack", "original_transaction_id", "lp1")
            let during = try await store.entitlements(user: "p1", catalog: Self.catalog, now: Self.start + Self.day)
            #expect(during.entitlements.map { "\($0.entitlement) \($0.grantID ?? $0.productID)" } == ["level_pack level.pack", "premium comp-1"])
            #expect(during.entitlements[1].expiresAt == Ticket.iso8601(milliseconds: Self.start + 7 * Self.day))
            let after = try await store.entitlements(user: "p1", catalog: Self.catalog, now: Self.start + 7 * Self.day)
            #expect(after.entitlements.map(\.entitlement) == ["level_pack"])

            // Not due: nothing ends. Due: two sweepers at once, one end each.
            #expect(try await store.endDueTimedGrants(now: Self.start + 7 * Self.day - 1) == 0)
            let sweeps = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2 { group.addTask { try await store.endDueTimedGrants(now: Self.start + 8 * Self.day) } }
                return try await group.reduce(0, +)
            }
            #expect(sweeps == 2)  // p1's and p2's
            #expect(try await store.endDueTimedGrants(now: Self.start + 9 * Self.day) == 0)
            #expect(try await redis.send("ZCARD", Self.keys.timedGrantEnds).int == 0)
            let events = try await store.fulfilmentEntries().map(\.fields)
            #expect(events.map { "\($0["event"]!) \($0["user_id"]!) \($0["grant_id"]!) \($0["ended_by"] ?? "")" } == [
                "entitlement_granted p1 comp-1 ", "entitlement_granted p2 comp-1 ", "entitlement_ended p1 comp-1 expired",
                "entitlement_ended p2 comp-1 expired",
            ] || events.map { "\($0["event"]!) \($0["user_id"]!) \($0["grant_id"]!) \($0["ended_by"] ?? "")" } == [
                "entitlement_granted p1 comp-1 ", "entitlement_granted p2 comp-1 ", "entitlement_ended p2 comp-1 expired",
                "entitlement_ended p1 comp-1 expired",
            ])
            #expect(events[0]["expires_at"] == String(Self.start + 7 * Self.day) && events[0]["granted_by"] == "backend-1")
            let kept = try await store.timedGrants(of: "p1")
            #expect(kept.map(\.status) == ["ended"] && kept[0].endedBy == "expired" && kept[0].endedAt == Self.start + 8 * Self.day)
            // The id stays taken after the end.
            #expect(try await store.grantForATime(user: "p1", grant: grant) == .seenBefore(kept[0]))
        }
    }

    @Test func aGrantTakenBackEarlyEndsOnceAndNotAgainAtItsEnd() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let grant = try Self.order("promo").grant(catalog: Self.catalog, source: "console", by: "sam", now: Self.start)
            _ = try await store.grantForATime(user: "p3", grant: grant)
            guard case .ended(let ended) = try await store.endTimedGrant(user: "p3", grantID: "promo", why: .revoked, by: "sam", now: Self.start + 1) else {
                Issue.record("the grant was not taken back")
                return
            }
            #expect(ended.endedBy == "revoked")
            #expect(try await store.endTimedGrant(user: "p3", grantID: "promo", why: .revoked, now: Self.start + 2) == .unchanged(ended))
            #expect(try await store.endTimedGrant(user: "p3", grantID: "nope", why: .revoked, now: Self.start + 2) == .notFound)
            #expect(try await store.endDueTimedGrants(now: Self.start + 30 * Self.day) == 0)
            let events = try await store.fulfilmentEntries().map(\.fields).map { "\($0["event"]!) \($0["ended_by"] ?? "")" }
            #expect(events == ["entitlement_granted ", "entitlement_ended revoked"])
            #expect(try await store.entitlements(user: "p3", catalog: Self.catalog, now: Self.start + 3).entitlements.isEmpty)
        }
    }

    @Test(arguments: [
        (TimedGrantOrder(grantID: "", entitlement: "premium", duration: .seconds(60), reason: "r"), "invalid_grant_id"),
        (TimedGrantOrder(grantID: "a b", entitlement: "premium", duration: .seconds(60), reason: "r"), "invalid_grant_id"),
        (TimedGrantOrder(grantID: "a", entitlement: "gold", duration: .seconds(60), reason: "r"), "unknown_entitlement"),
        (TimedGrantOrder(grantID: "a", entitlement: "premium", duration: .seconds(60), reason: ""), "invalid_reason"),
        (TimedGrantOrder(grantID: "a", entitlement: "premium", reason: "r"), "invalid_until"),
        (TimedGrantOrder(grantID: "a", entitlement: "premium", until: start + 1, duration: .seconds(60), reason: "r"), "invalid_until"),
        (TimedGrantOrder(grantID: "a", entitlement: "premium", until: start, reason: "r"), "invalid_until"),
        (TimedGrantOrder(grantID: "a", entitlement: "premium", until: start + 366 * day, reason: "r"), "invalid_until"),
    ])
    func anOrderThatCannotBeGrantedIsRefused(order: TimedGrantOrder, code: String) {
        #expect {
            try order.grant(catalog: Self.catalog, source: "api", by: "", now: Self.start)
        } throws: { ($0 as? TimedGrantOrder.Refusal)?.code == code }
    }
}

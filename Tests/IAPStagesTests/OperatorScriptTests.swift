import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// What an on-call engineer does by hand (`iapctl grant`, `iapctl revoke`) and reads (`iapctl stats`).
@Suite struct OperatorScriptTests {
    static let keys = RedisKeys(prefix: "{t}iap")

    @Test func aGrantByHandHappensOncePerIdAndIsAudited() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            #expect(try await store.grantByOperator(
                id: "case-42", user: "u1", product: "gold.100", quantity: 3, by: "alice", note: "lost order", now: 10) == nil)
            #expect(try await store.grantByOperator(
                id: "case-42", user: "u2", product: "gold.100", quantity: 3, by: "bob", note: "again", now: 11) == "u1")
            let record = try await redis.send("HGETALL", Self.keys.grant(unit: "operator:case-42")).stringDictionary
            #expect(record["user_id"] == "u1" && record["quantity"] == "3" && record["source"] == "operator" && record["granted_by"] == "alice")
            let events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.count == 1)
            #expect(events[0]["event"] == "granted" && events[0]["source"] == "operator" && events[0]["operator"] == "alice")
            #expect(events[0]["note"] == "lost order" && events[0]["unit"] == "operator:case-42")
        }
    }

    @Test func aRevocationByHandHappensOnceAndIsNoRefund() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            _ = try await store.grantByOperator(id: "c1", user: "u1", product: "p", quantity: 1, by: "alice", note: "", now: 1)
            #expect(try await store.revokeByOperator(unit: "operator:c1", by: "bob", note: "fraud", now: 5) == "revoked")
            #expect(try await store.revokeByOperator(unit: "operator:c1", by: "bob", note: "fraud", now: 6) == "already_revoked")
            #expect(try await store.revokeByOperator(unit: "nothing", by: "bob", note: "", now: 6) == nil)
            let record = try await redis.send("HGETALL", Self.keys.grant(unit: "operator:c1")).stringDictionary
            #expect(record["revoked_at"] == "5" && record["revocation_reason"] == "operator" && record["revoked_by"] == "bob")
            let events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.map { $0["event"] } == ["granted", "revoked"] && events[1]["source"] == "operator" && events[1]["user_id"] == "u1")
            #expect(try await redis.send("EXISTS", Self.keys.refunds(user: "u1")).int == 0)
        }
    }

    /// `iapctl stats` shows how long the oldest job of each queue has waited and the retries due.
    @Test func statsShowTheOldestJobsAgeAndTheRetriesDue() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let now = currentTimeMs()
            let old = Job(ticket: "T1", userID: "u", receiptData: "cmVjZWlwdA==", productID: nil, transactionID: nil, enqueuedAt: now - 5000)
            let new = Job(ticket: "T2", userID: "u", receiptData: "cmVjZWlwdA==", productID: nil, transactionID: nil, enqueuedAt: now)
            _ = try await store.submit(old, receiptDigest: "a", ttl: .seconds(60))
            _ = try await store.submit(new, receiptDigest: "b", ttl: .seconds(60))
            try await redis.send("ZADD", Self.keys.retry, String(now - 1), "r1", String(now + 60_000), "r2")
            let stats = try await store.stats(lease: .seconds(30), now: now)
            #expect(stats.queues["verify"] == 2 && stats.oldestAgeMs["verify"] == 5000 && stats.oldestAgeMs["dedupe"] == nil)
            #expect(stats.retry == 2 && stats.retryDue == 1)
        }
    }

    /// `iapctl user`: the user's entries of the stream in order, their holds, subscriptions and entitlements.
    @Test func aUsersReportGathersTheirTimeline() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let t0: Int64 = 1_800_000_000_000
            _ = try await EntitlementTests.grant(store, ticket: "A", transaction: "p1", product: "level.pack", now: t0)
            _ = try await EntitlementTests.grant(
                store, ticket: "S", transaction: "s1", product: "vip.monthly", expiresAt: t0 + 86_400_000, signedAt: t0, now: t0)
            _ = try await EntitlementTests.grant(store, ticket: "O", user: "other", transaction: "g1", product: "gold.100", now: t0)
            _ = try await store.grantByOperator(id: "c1", user: "u1", product: "gold.100", quantity: 1, by: "alice", note: "", now: t0 + 1)
            try await redis.send("SET", Self.keys.refunds(user: "u1"), "2")
            let report = try await store.userReport(user: "u1", catalog: PipelineHarness.catalog, now: t0 + 2)
            #expect(report.refunds == 2 && report.lifetime == ["p1"] && report.subscriptions["s1"]?["status"] == "active")
            #expect(report.timeline.map { $0["event"] ?? "" } == ["granted", "granted", "entitlement_changed", "entitlement_changed", "granted"])
            #expect(report.timeline.allSatisfy { $0["user_id"] == "u1" && $0["id"] != nil })
            #expect(report.entitlements?.entitlements.map(\.entitlement) == ["level_pack", "no_ads", "premium"])
            #expect(try await store.userReport(user: "nobody", catalog: nil).timeline.isEmpty)
        }
    }
}

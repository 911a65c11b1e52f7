import Foundation
import IAPOperations
import IAPStages
import PipelineCore
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// Each user's events, indexed in the same step as the fulfilment entry (`append_event`): capped
/// per user, exact per user whatever the ids hold, read newest first and paged without the stream.
@Suite struct UserEventsTests {
    static let keys = RedisKeys(prefix: "{t}iap")

    /// Each fulfilment entry's id, in order.
    static func entryIDs(_ redis: RedisClient) async throws -> [String] {
        try await redis.send("XRANGE", keys.fulfilment, "-", "+").array?.compactMap { $0.array?.first?.string } ?? []
    }

    @Test func eachEventIsIndexedForItsUserInTheSameStepAndTheOldestGoesPastTheCap() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let cap = RedisKeys.userEventsCap
            for index in 0..<(cap + 5) {
                _ = try await store.grantByOperator(id: "c\(index)", user: "u", product: "gold", quantity: 1, by: "ada", note: "", now: 1)
            }
            // Users whose ids begin alike keep their own ranges.
            for user in ["uu", "u:", "", "ü"] where !user.isEmpty {
                _ = try await store.grantByOperator(id: "x-\(user)", user: user, product: "gem", quantity: 1, by: "ada", note: "", now: 1)
            }
            _ = try await store.revokeByOperator(unit: "operator:c\(cap + 4)", by: "ada", note: "", now: 2)
            let ids = try await Self.entryIDs(redis)
            #expect(ids.count == cap + 5 + 3 + 1)
            #expect(try await redis.send("ZCARD", Self.keys.userEvents).int == Int64(cap + 3))

            let first = try await store.userEvents(of: "u", limit: 60)
            #expect(first.events.count == 60 && first.nextBefore == first.events.last?.entryID)
            #expect(first.events[0].event == "revoked" && first.events[0].unit == "operator:c\(cap + 4)")
            #expect(first.events[1].event == "granted" && first.events[1].productID == "gold" && first.events[1].originalTransactionID == "c\(cap + 4)")
            let rest = try await store.userEvents(of: "u", limit: 60, before: first.nextBefore)
            #expect(rest.events.count == cap - 60 && rest.nextBefore == nil)
            // Newest first, each naming its entry: the user's newest `cap`, the six oldest gone.
            let userIDs = ids.enumerated().filter { $0.offset < cap + 5 || $0.offset == ids.count - 1 }.map(\.element)
            #expect((first.events + rest.events).map(\.entryID) == Array(userIDs.suffix(cap).reversed()))
            #expect((first.events + rest.events).allSatisfy { $0.delivery == nil && $0.bucket == 0 })
            for user in ["uu", "u:", "ü"] {
                let theirs = try await store.userEvents(of: user)
                #expect(theirs.events.map(\.unit) == ["operator:x-\(user)"], "\(user)")
            }
            #expect(try await store.userEvents(of: "nobody").events.isEmpty)
        }
    }

    /// With a webhook reading the stream: an event the group has not read, or one still in the
    /// user's list, is waiting; the ones before are delivered.
    @Test func anEventIsDeliveredOnceTheWebhookGroupReadItAndTheUsersListIsPastIt() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            for index in 0..<3 {
                _ = try await store.grantByOperator(id: "d\(index)", user: "w", product: "gold", quantity: 1, by: "ada", note: "", now: 1)
            }
            let ids = try await Self.entryIDs(redis)
            try await redis.send("XGROUP", "CREATE", Self.keys.fulfilment, RedisKeys.webhookGroup, ids[1])
            try await redis.send("RPUSH", Self.keys.webhookEvents(user: "w"), "{\"id\":\"\(ids[1])\",\"fields\":{}}")
            let events = try await store.userEvents(of: "w").events
            #expect(events.map(\.entryID) == ids.reversed())
            #expect(events.map(\.delivery) == ["waiting", "waiting", "delivered"])
        }
    }

    /// Entries written before the index existed are indexed a page at a time, as if when written:
    /// each user's newest 100, an entry naming nobody left out; a second run changes nothing.
    @Test func indexUserEventsIndexesAStreamWrittenBeforeTheIndex() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            for index in 0..<150 {
                try await redis.send("XADD", Self.keys.fulfilment, "*", "event", "granted", "user_id", "a", "unit", "u\(index)", "product_id", "gold")
                if index % 50 == 0 { try await redis.send("XADD", Self.keys.fulfilment, "*", "event", "granted", "user_id", "b", "unit", "b\(index)") }
            }
            try await redis.send("XADD", Self.keys.fulfilment, "*", "event", "notification", "user_id", "")
            // One written with the index (the pipeline running beside the backfill).
            _ = try await store.grantByOperator(id: "late", user: "a", product: "gold", quantity: 1, by: "ada", note: "", now: 1)
            let ids = try await Self.entryIDs(redis)
            #expect(try await store.indexUserEvents(page: 40) == ids.count)
            let first = try await redis.send("ZRANGE", Self.keys.userEvents, "0", "-1").array?.compactMap(\.string) ?? []
            let a = try await store.userEvents(of: "a", limit: 200).events
            #expect(a.count == RedisKeys.userEventsCap && a.first?.unit == "operator:late" && a.last?.unit == "u51")
            #expect(try await store.userEvents(of: "b").events.map(\.unit) == ["b100", "b50", "b0"])
            #expect(first.count == RedisKeys.userEventsCap + 3)
            #expect(try await store.indexUserEvents(page: 1000) == ids.count)
            #expect(try await redis.send("ZRANGE", Self.keys.userEvents, "0", "-1").array?.compactMap(\.string) == first)
        }
    }
}

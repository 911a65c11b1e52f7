import Foundation
import IAPStages
import IAPOperations
import PipelineCore
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// The whole pipeline (intake, the five stages, apple-sim) on a real Redis Cluster of 3 primaries
/// with a replica each, its keys on one slot by the prefix's hash tag: every script's keys, the
/// blocking pops and the results channel (sharded pub/sub) meet on that slot's primary.
@Suite struct ClusterPipelineTests {
    @Test func receiptsAreGrantedOnceOnAClusterSlot() async throws {
        let nodes = try await RedisClusterNodes.start()
        defer { nodes.stop() }
        try await withPipeline(environment: ["IAP_REDIS_URL": nodes.url, "IAP_PREFIX": "{iap}", "IAP_REDIS_MIN_REPLICAS": "1"]) { pipeline in
            let first = try await pipeline.terminal(try await pipeline.submit(receipt([gold("c-1"), gold("c-2")])))
            #expect(first.status == .granted && first.transactions.map(\.outcome) == [.granted, .granted])
            // The same purchases from another user are duplicates, never a second grant.
            let replay = try await pipeline.terminal(try await pipeline.submit(receipt([gold("c-1")]), user: "player-2"))
            #expect(replay.transactions.map(\.outcome) == [.duplicate])
            #expect(try await pipeline.fulfilments().count == 2)
            // Everything lives on the slot of the tag, on its primary.
            let owner = try await nodes.primaryPort(ofSlot: RedisClusterSlot.of("{iap}"))
            #expect(try await directReply(port: owner, "EXISTS", pipeline.configuration.keys.grant(unit: "c-1")) == "1")
            let stats = try await pipeline.store.stats(lease: .seconds(30))
            #expect(stats.inflight.values.allSatisfy { $0 == 0 } && stats.queues.values.allSatisfy { $0 == 0 })
            #expect(stats.liveWorkers.values.reduce(0, +) >= 4)
        }
    }

    /// The keyspace over buckets on the three primaries (a plain prefix: 64 buckets by default):
    /// receipts split into parts, a refund applied in its purchase's bucket, and the readers that
    /// add every bucket up, all on a real cluster, which refuses any step whose keys cross slots.
    @Test func receiptsAreGrantedOnceOverBucketsOnEveryPrimary() async throws {
        let nodes = try await RedisClusterNodes.start()
        defer { nodes.stop() }
        try await withPipeline(environment: ["IAP_REDIS_URL": nodes.url, "IAP_PREFIX": "iap", "IAP_REDIS_MIN_REPLICAS": "1"]) { pipeline in
            let layout = pipeline.configuration.redis.layout
            #expect(layout.count == RedisSettings.clusterBuckets)
            var tickets: [String] = []
            for n in 0..<6 {
                tickets.append(try await pipeline.postUntilAccepted([
                    "receipt_data": receipt([gold("b\(n)-1"), gold("b\(n)-2")]).receiptData(), "user_id": "player-\(n)",
                ]).json["ticket"] as? String ?? "")
            }
            for ticket in tickets {
                let final = try await pipeline.terminal(ticket)
                #expect(final.status == .granted && final.transactions.map(\.outcome) == [.granted, .granted])
            }
            // The purchases' buckets lie on more than one primary.
            let owners = Set(try await (0..<6).asyncMap { n in
                try await nodes.primaryPort(ofSlot: RedisClusterSlot.of(pipeline.configuration.keys.grant(unit: "b\(n)-1", originalTransactionID: "b\(n)-1")))
            })
            #expect(owners.count > 1)
            let replay = try await pipeline.terminal(try await pipeline.submit(receipt([gold("b0-1")]), user: "thief"))
            #expect(replay.transactions.map(\.outcome) == [.duplicate])
            // A refund, applied in its purchase's bucket.
            let api = pipeline.simulator.serverAPI
            let id = "4100000000000001"
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: try api.register(SignedFixture.consumable(id)))).status == .granted)
            let reply = try await pipeline.notify(try api.signedNotification(type: "REFUND", transactionID: id))
            let applied = try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
            #expect(applied.status == .applied && applied.result == "revoked")
            // Readers over every bucket: one pipeline, one per slot.
            #expect(try await pipeline.fulfilments().count == 14)
            let stats = try await pipeline.store.stats(lease: .seconds(30))
            #expect(stats.inflight.values.allSatisfy { $0 == 0 } && stats.queues.values.allSatisfy { $0 == 0 } && stats.dead == 0)
            #expect(try await pipeline.store.heldPurchases(limit: 10).isEmpty)
            #expect(try await pipeline.store.refundCount(of: "player-1") == 1)
            // Every step named its slot's migration guard, and none wrote it.
            for port in try await nodes.primaryPorts() {
                #expect(try await directReply(port: port, "KEYS", "*migration-guard*") == "", "on :\(port)")
            }
        }
    }
}

extension Sequence where Element: Sendable {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for element in self { out.append(try await transform(element)) }
        return out
    }
}

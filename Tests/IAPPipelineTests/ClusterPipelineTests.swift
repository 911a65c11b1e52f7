import Foundation
import IAPPipeline
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
}

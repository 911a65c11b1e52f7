import Foundation
import PipelineCore
import IAPStages
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// Bounded, and nothing a consumer still needs dropped (issue 38, item 6): a bucket's fulfilment
/// stream is trimmed past its retention but never below a consumer group's unread or pending
/// entries nor the refund sweep's cursor; dead letters keep to their count and age, each dropped
/// one handed back to be counted and logged. Scripts on a cluster node, times pinned.
@Suite struct RetentionTests {
    static let keys = RedisKeys(prefix: "{t}iap")

    @Test func theStreamIsTrimmedPastItsRetentionButNeverBelowWhatAConsumerHasNotHad() async throws {
        try await withClusterNode { redis, _ in
            // One entry a node, so the approximate trim is exact here.
            try await redis.send("CONFIG", "SET", "stream-node-max-entries", "1")
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let stream = Self.keys.fulfilment
            for second in 1...10 { try await redis.send("XADD", stream, "\(second * 1000)-0", "event", "granted") }
            /// "<entries trimmed> below <id>".
            func trim(floor: Int64? = nil) async throws -> String {
                let result = try await store.trimFulfilmentStream(retention: .milliseconds(5000), floorMs: floor, now: 12_000)
                return "\(result.trimmed) below \(result.below)"
            }
            // A group that has had up to 3000: nothing after it goes, whatever the retention says.
            try await redis.send("XGROUP", "CREATE", stream, "backend", "3000-0")
            #expect(try await trim() == "2 below 3000-0")
            // Delivered but not acknowledged (4000, 5000): still needed.
            try await redis.send("XREADGROUP", "GROUP", "backend", "c1", "COUNT", "2", "STREAMS", stream, ">")
            #expect(try await trim() == "1 below 4000-0")
            // The refund sweep has read up to 4500 ms only.
            try await redis.send("XACK", stream, "backend", "4000-0", "5000-0")
            #expect(try await trim(floor: 4500) == "1 below 4500-0")
            // Everyone has had everything to 9000: the retention (now − 5 s) decides.
            try await redis.send("XREADGROUP", "GROUP", "backend", "c1", "COUNT", "4", "STREAMS", stream, ">")
            try await redis.send("XACK", stream, "backend", "6000-0", "7000-0", "8000-0", "9000-0")
            #expect(try await trim() == "2 below 7000-0")
            let left = try await redis.send("XRANGE", stream, "-", "+").array?.compactMap { $0.array?.first?.string }
            #expect(left == ["7000-0", "8000-0", "9000-0", "10000-0"])
        }
    }

    @Test func deadLettersKeepToTheirCountAndAgeAndComeBackToBeLogged() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            func letter(_ ticket: String, at: Int64) -> String {
                DeadLetter(job: "{}", stage: "verify", reason: "retries_exhausted", error: "e", attempts: 4, at: at, ticket: ticket).encoded()
            }
            try await redis.send("LPUSH", Self.keys.dead, "not json")
            for index in 1...5 { try await redis.send("LPUSH", Self.keys.dead, letter("T\(index)", at: Int64(index) * 1000)) }
            // Six, three allowed: the three oldest go, oldest first (one a call with limit 1).
            #expect(try await store.trimDeadLetters(max: 3, maxAge: .seconds(3600), limit: 1, now: 12_000) == ["not json"])
            let dropped = try await store.trimDeadLetters(max: 3, maxAge: .seconds(3600), now: 12_000)
            #expect(try dropped.map { try DeadLetter.decode($0).ticket } == ["T1", "T2"])
            // Within the count, by age: nothing older than now − 9,500 ms (2,500), then (at 12,600) than 3,100.
            #expect(try await store.trimDeadLetters(max: 3, maxAge: .milliseconds(9500), now: 12_000).isEmpty)
            let old = try await store.trimDeadLetters(max: 3, maxAge: .milliseconds(9500), now: 12_600)
            #expect(try old.map { try DeadLetter.decode($0).ticket } == ["T3"])
            #expect(try await redis.send("LLEN", Self.keys.dead).int == 2)
        }
    }

    /// A user's consumption facts are capped: a new purchase's fact past the cap replaces the one
    /// recorded longest ago; a purchase already known is replaced in place.
    @Test func consumptionFactsAreCappedPerUser() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let fact = PipelineStore.RecordedConsumption(deliveryStatus: .delivered, percentage: 50_000)
            for (index, at) in [3000, 1000, 2000].enumerated() {
                #expect(try await store.recordConsumption(fact, user: "u1", transactionID: "t\(index)", now: Int64(at), max: 3) == nil)
            }
            #expect(try await store.recordConsumption(fact, user: "u1", transactionID: "t0", now: 4000, max: 3) == nil)
            #expect(try await store.recordConsumption(fact, user: "u1", transactionID: "t3", now: 5000, max: 3) == "t1")
            #expect(try await store.recordConsumption(fact, user: "u1", transactionID: "t4", now: 6000, max: 3) == "t2")
            let left = try await redis.send("HKEYS", Self.keys.consumption(user: "u1")).array?.compactMap(\.string).sorted()
            #expect(left == ["t0", "t3", "t4"])
        }
    }

    /// The grant stage's workers trim by the settings.
    @Test func theGrantStageKeepsTheDeadLettersToTheirBound() async throws {
        try await withPipeline(startWorkers: false, environment: ["IAP_DEAD_MAX": "2"]) { pipeline in
            let dead = pipeline.configuration.keys.dead
            for index in 1...5 {
                let entry = DeadLetter(
                    job: "{}", stage: "verify", reason: "retries_exhausted", error: "e", attempts: 4, at: currentTimeMs(), ticket: "T\(index)")
                try await pipeline.redis.send("LPUSH", dead, entry.encoded())
            }
            pipeline.start(.grant)
            // The worker's housekeeping, in its own task: polled.
            try await until("the dead letters are trimmed") { try await pipeline.length(dead) == 2 }
            let kept = try await pipeline.store.deadLetters(limit: 10).map { try DeadLetter.decode($0).ticket }
            #expect(kept == ["T5", "T4"])
        }
    }
}

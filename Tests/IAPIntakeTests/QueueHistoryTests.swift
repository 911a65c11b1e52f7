import Foundation
import IAPIntake
import PipelineCore
import RedisClient
import TestSupport
import Testing

/// The intakes' sampler keeps the queues' last hour for the console: the first sample of each
/// minute (another intake's later look at the same minute changes nothing), an hour at most, and
/// the events written, whose rise a minute is the throughput. The clock is the test's.
@Suite struct QueueHistoryTests {
    @Test func eachMinuteKeepsItsFirstSampleForAnHour() async throws {
        try await withRedis { redis, _ in
            let keys = RedisKeys()
            let store = PipelineStore(redis: redis, keys: keys)
            let start: Int64 = 1_795_000_000_000 / 60_000 * 60_000
            // Minute 0: nothing written yet (no stream), two jobs waiting to verify.
            _ = try await redis.send("LPUSH", keys.queue(.verify), "{}", "{}")
            try await QueueSampler.round(store, metrics: false, now: start + 1_000)
            // The same minute again, after three events and a dead letter: the first look stays.
            for _ in 0..<3 { _ = try await redis.send("XADD", keys.fulfilment, "*", "event", "granted") }
            _ = try await redis.send("LPUSH", keys.dead, "{}")
            try await QueueSampler.round(store, metrics: false, now: start + 30_000)
            // Minute 1: two more events.
            for _ in 0..<2 { _ = try await redis.send("XADD", keys.fulfilment, "*", "event", "granted") }
            try await QueueSampler.round(store, metrics: false, now: start + 61_000)
            var history = try await store.queueHistory()
            #expect(history.samples.map(\.at) == [start, start + 60_000])
            #expect(history.samples.map(\.totalQueued) == [2, 2] && history.samples.map(\.dead) == [0, 1])
            #expect(history.samples.map(\.events) == [0, 5] && history.eventsPerMinute == [nil, 5])

            // An hour on: the first two minutes are gone, the hour's remain.
            for minute in 2...62 { try await QueueSampler.round(store, metrics: false, now: start + Int64(minute) * 60_000) }
            history = try await store.queueHistory()
            #expect(history.samples.count == 61 && history.samples.first?.at == start + 2 * 60_000)
            #expect(try await redis.send("HLEN", keys.queueHistory).int == 61)
        }
    }
}

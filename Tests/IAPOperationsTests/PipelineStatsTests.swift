import IAPOperations
import PipelineCore
import PipelineTestSupport
import Testing

/// `stats`: in-flight lists found by SCAN (`iapctl stats`, orphans too) or from the workers'
/// entries alone (the console's overview, polled: no walk of the keyspace).
@Suite struct PipelineStatsTests {
    @Test func inFlightJobsAreCountedFromTheWorkersEntriesWithoutAScan() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let keys = pipeline.store.keys
            let now = currentTimeMs()
            _ = try await pipeline.redis.send("ZADD", keys.workers, String(now), "verify:w1", String(now - 3_600_000), "dedupe:silent")
            for job in ["a", "b", "c"] { _ = try await pipeline.redis.send("LPUSH", keys.inflight(member: "verify:w1"), job) }
            _ = try await pipeline.redis.send("LPUSH", keys.inflight(member: "dedupe:silent"), "d")
            // A list no worker entry names (its worker forgotten before the reaper ran): SCAN finds it.
            _ = try await pipeline.redis.send("LPUSH", keys.inflight(member: "grant:gone"), "e")
            let scanned = try await pipeline.store.stats(lease: .seconds(30), now: now)
            #expect(scanned.inflight["verify"] == 3 && scanned.inflight["dedupe"] == 1 && scanned.inflight["grant"] == 1)
            let listed = try await pipeline.store.stats(lease: .seconds(30), now: now, scanInflight: false)
            #expect(listed.inflight["verify"] == 3 && listed.inflight["dedupe"] == 1 && listed.inflight["grant"] == 0)
            #expect(listed.liveWorkers["verify"] == 1 && listed.liveWorkers["dedupe"] == 0)
        }
    }
}

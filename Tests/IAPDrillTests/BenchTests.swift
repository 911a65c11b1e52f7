import Foundation
import TestSupport
import Testing

@testable import IAPBench

/// The bench's readings, and one small scenario against the executables `swift test` built.
/// No figure of speed is asserted: only counts that do not depend on the machine.
@Suite(.serialized, .takingTurns)
struct BenchTests {
    @Test func commandStatsSeparateRoundTripsFromCommandsRunInsideScripts() {
        let before = CommandStats(info: "# Commandstats\r\ncmdstat_evalsha:calls=10,usec=5,usec_per_call=0.5\r\n")
        let after = CommandStats(info: """
            # Commandstats\r
            cmdstat_evalsha:calls=14,usec=9,usec_per_call=0.6,rejected_calls=0,failed_calls=0\r
            cmdstat_blmove:calls=3,usec=1,usec_per_call=0.3,rejected_calls=0,failed_calls=0\r
            cmdstat_hset:calls=8,usec=1,usec_per_call=0.1,rejected_calls=0,failed_calls=0\r
            cmdstat_xlen:calls=50,usec=1,usec_per_call=0.1,rejected_calls=0,failed_calls=0\r
            """)
        let delta = after - before
        #expect(delta.calls == ["evalsha": 4, "blmove": 3, "hset": 8, "xlen": 50])
        #expect(delta.roundTrips == 7)
        #expect(delta.pipelineCommands == 15)
    }

    @Test func redisBenchmarkCSVIsRead() throws {
        let ceiling = try RedisCeiling(csv: """
            "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
            "LPUSH","80000.00","0.3","0.1","0.3","0.5","0.7","2.0"
            "RPOP","90000.00","0.3","0.1","0.3","0.5","0.7","2.0"
            """)
        #expect(ceiling.lpushPerSecond == 80000 && ceiling.rpopPerSecond == 90000 && ceiling.opsPerSecond == 85000)
        #expect(throws: BenchError.self) { try RedisCeiling(csv: "Could not connect") }
    }

    @Test func percentilesAreNearestRank() {
        let summary = LatencySummary((1...100).map(Double.init))
        #expect(summary.count == 100 && summary.p50 == 50 && summary.p95 == 95 && summary.p99 == 99 && summary.max == 100)
        #expect(summary.minus(60).p50 == 0 && summary.minus(60).p99 == 39)
        #expect(LatencySummary([]).p99 == 0)
    }

    @Test func ownProcessUsageIsRead() throws {
        let usage = try #require(ProcessUsage.read(pid: getpid()))
        #expect(usage.rssBytes > 0 && usage.peakRSSBytes >= usage.rssBytes && usage.anonymousRSSBytes > 0)
        #expect(ProcessUsage.read(pid: -1) == nil)
    }

    /// Every receipt of every phase is granted (the bench throws otherwise), and the pipeline's
    /// Redis round trips per receipt stay within their bounds: one job at a time (light load) is
    /// intake 1, verify 4 (take_jobs finding nothing, BLMOVE, mark, forward), dedupe 3, grant 3;
    /// batches (take_jobs, group-committed marks) only lower that.
    @Test func aSmallScenarioIsMeasuredEndToEnd() async throws {
        let bin = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        var settings = BenchSettings(
            binDirectory: bin,
            workDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("iap-bench-\(UUID().uuidString)"))
        defer { try? FileManager.default.removeItem(at: settings.workDirectory) }
        settings.scenarios = [BenchScenario(name: "smoke", appleLatencyMs: 5, verifiers: 1, concurrency: 8, durability: .none)]
        settings.intakeReceipts = 300
        settings.endToEndReceipts = 300
        settings.halfPeakSeconds = 0.5
        settings.lightRate = 200
        settings.idleSeconds = 1
        settings.ceilingRequests = 2000
        let result = try #require(try await Bench(settings: settings).run().first)
        #expect(result.endToEndReceipts == 300)
        #expect(result.latency.count >= 100)
        #expect(result.roundTripsPerReceipt >= 0.1 && result.roundTripsPerReceipt <= 11.1, "\(result.commandsByName)")
        // submit, forward, claim and grant at most once per receipt, at least once per batch of up
        // to 64 (their group commits); marks and takes at most once each per stage.
        #expect(result.commandsByName["evalsha"].map { $0 >= 4.0 / 64 && $0 <= 8.1 } == true, "\(result.commandsByName)")
        // At a light fixed rate jobs mostly come one by one: about 8 round trips (intake 1; verify
        // BLMOVE, mark, forward; dedupe and grant BLMOVE and their script), a take_jobs finding
        // nothing per stage at most, and the workers' heartbeats; fewer when a slow machine lets jobs
        // gather into batches (the group commit), never fewer than the intake's one and a stage's share.
        // The pipeline's idle chatter is added at the rate the run managed (a loaded machine halves
        // the peak, and with it the light rate, so the same chatter is spread over fewer receipts).
        let light = result.lightLoad
        #expect(light.latency.count >= 100)
        #expect(light.perSecond <= 200 && light.perSecond >= 1)
        #expect(light.idleRoundTripsPerSecond > 0, "the workers' heartbeats and takes reach Redis while idle")
        #expect(
            light.roundTripsPerReceipt >= 2 && light.roundTripsPerReceipt <= 12 + light.idleRoundTripsPerSecond / light.perSecond,
            "\(light.roundTripsPerReceipt) round trips a receipt at \(light.perSecond)/s, \(light.idleRoundTripsPerSecond)/s idle")
        #expect(Set(result.processes.keys).isSuperset(of: ["iap-intake", "iap-verifier", "iap-deduper", "iap-granter", "redis-server"]))
        #expect(result.ceiling.opsPerSecond > 0)
        // The intake alone, and apple-sim's bare Hummingbird route (which answered every one with a ticket).
        #expect(result.intakeAloneCPUMsPer1000 > 0 && result.hummingbirdFloorCPUMsPer1000 > 0)
    }
}

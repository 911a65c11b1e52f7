import AppleSimulator
import Foundation
import PipelineCore
@testable import IAPStages
import IAPOperations
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// The fleet's Apple breakers (issue 38, item 1): Apple's outages heal by themselves. A failure
/// spends a job's attempt only when the service answered someone since the job last failed;
/// failures with no answer for the quiet time open the service's breaker; while open its jobs
/// wait in the retry set without asking but for one probe an interval, fleet-wide; an answer
/// closes it. The scripts run on a cluster node with tagged keys and pinned times; the pipeline
/// meets a real outage of apple-sim.
@Suite struct AppleBreakerTests {
    static let keys = RedisKeys(prefix: "{t}iap")
    static let settings = AppleBreakerSettings(minFailures: 3, quiet: .seconds(2), probe: .seconds(1))

    @Test func eachFailureIsTheServiceItNames() {
        #expect(AppleService(failure: "apple_http_503") == .verifyReceipt)
        #expect(AppleService(failure: "apple_status_21005") == .verifyReceipt)
        #expect(AppleService(failure: "apple_unreachable") == .verifyReceipt)
        #expect(AppleService(failure: "apple_api_http_500") == .serverAPI)
        #expect(AppleService(failure: "apple_api_unreachable") == .serverAPI)
        // Not Apple failing: the fleet's own budget, our Redis, a job that did not ask.
        #expect(AppleService(failure: "apple_api_rate_limited") == nil)
        #expect(AppleService(failure: "redis_unavailable") == nil)
        #expect(AppleService(failure: "apple_breaker_open") == nil)
    }

    @Test func failuresSpendOnlyWhileAppleAnswersOthersAndOpenTheBreakerWhenItAnswersNobody() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            func fail(_ before: Int64?, at now: Int64) async throws -> AppleFailureVerdict {
                try await store.recordAppleFailure(.verifyReceipt, reason: "apple_http_503", failedBefore: before, settings: Self.settings, now: now)
            }
            // Never answered: a first failure is nobody's own, nothing spent.
            #expect(try await fail(nil, at: 10_000) == .init(spends: false, state: .closed, at: 10_000))
            // Apple answers others: a job's first failure within the quiet time spends …
            #expect(try await store.recordAppleAnswers(.verifyReceipt, count: 4, now: 10_500) == .init(open: false, closedAfter: nil))
            #expect(try await fail(nil, at: 11_000) == .init(spends: true, state: .closed, at: 11_000))
            // … and its next one only if Apple answered someone since its last.
            #expect(try await fail(11_000, at: 11_100).spends == false)
            try await store.recordAppleAnswers(.verifyReceipt, count: 1, now: 11_200)
            #expect(try await fail(11_100, at: 11_300).spends == true)
            // Answers told late keep when Apple gave them: one given before this job's failure,
            // told after it, does not make its next failure its own.
            try await store.recordAppleAnswers(.verifyReceipt, count: 2, age: .milliseconds(500), now: 11_700)
            #expect(try await store.appleBreakerState(.verifyReceipt)["last_answer"] == "11200")
            try await store.recordAppleAnswers(.verifyReceipt, count: 1, age: .milliseconds(900), now: 12_150)
            #expect(try await fail(11_300, at: 12_160).spends == false)
            // Failures keep coming and Apple answers nobody for the quiet time: it opens, once.
            #expect(try await fail(11_300, at: 12_200).state == .closed)
            #expect(try await fail(nil, at: 13_300) == .init(spends: false, state: .opened, at: 13_300))
            #expect(try await fail(nil, at: 13_400) == .init(spends: false, state: .open, at: 13_400))
            let state = try await store.appleBreakerState(.verifyReceipt)
            #expect(state["opened_at"] == "13300" && state["openings"] == "1" && state["last_reason"] == "apple_http_503")
            // Open: one probe a second, fleet-wide (the last failure put it off to 14,400).
            #expect(try await store.takeAppleProbe(.verifyReceipt, probe: Self.settings.probe, now: 14_000) == .wait(.milliseconds(400)))
            #expect(try await store.takeAppleProbe(.verifyReceipt, probe: Self.settings.probe, now: 14_400) == .probe)
            #expect(try await store.takeAppleProbe(.verifyReceipt, probe: Self.settings.probe, now: 14_401) == .wait(.milliseconds(999)))
            #expect(try await store.recordAppleAnswers(.verifyReceipt, count: 0, now: 14_500) == .init(open: true, closedAfter: nil))
            // An answer given before it opened, told late, does not close it.
            #expect(try await store.recordAppleAnswers(.verifyReceipt, count: 1, age: .milliseconds(1_300), now: 14_500)
                == .init(open: true, closedAfter: nil))
            // The probe's answer closes it; the queue is taken again.
            #expect(try await store.recordAppleAnswers(.verifyReceipt, count: 1, now: 14_800) == .init(open: false, closedAfter: .milliseconds(1_500)))
            #expect(try await store.takeAppleProbe(.verifyReceipt, probe: Self.settings.probe, now: 14_801) == .closed)
            let closed = try await store.appleBreakerState(.verifyReceipt)
            #expect(closed["opened_at"] == nil && closed["closed_at"] == "14800" && closed["failures"] == "0")
        }
    }

    /// A whole outage of apple-sim, longer than all of a job's attempts together (4, 5–20 ms
    /// apart): no dead letter; the breaker opens, the jobs wait, one probe a 200 ms; once Apple
    /// answers, everything is granted and the breaker is closed.
    @Test func anAppleOutageLongerThanEveryAttemptDeadLettersNothing() async throws {
        try await withPipeline(
            maxAttempts: 4, environment: ["IAP_APPLE_BREAKER_FAILURES": "3", "IAP_APPLE_BREAKER_PROBE_MS": "200"]
        ) { pipeline in
            #expect(try await pipeline.terminal(try await pipeline.submit(receipt([gold("br-0")]))).status == .granted)
            pipeline.simulator.startOutage(SimulatedOutage(mode: .unavailable, durationMs: 600_000))
            var tickets: [String] = []
            for index in 1...12 { tickets.append(try await pipeline.submit(receipt([gold("br-\(index)")]))) }
            // The breaker opens (another task's write to Redis: polled).
            try await until("the Apple breaker opens") { try await pipeline.store.appleBreakerState(.verifyReceipt)["opened_at"] != nil }
            // Held where an operator sees them: a job waits for its turn without asking, none dead.
            // (Tickets are another task's writes: polled.)
            try await until("a job waits for the probe") {
                for ticket in tickets where try await pipeline.store.ticket(ticket)?.lastError?.hasPrefix("apple_breaker_open") == true {
                    return true
                }
                return false
            }
            #expect(try await pipeline.length(pipeline.configuration.keys.dead) == 0)
            let stats = try await pipeline.store.stats(lease: .seconds(30))
            let breaker = try #require(stats.appleBreakers["verify-receipt"])
            #expect(breaker.openSinceMs != nil && breaker.lastFailure?.hasPrefix("apple_") == true)
            #expect(stats.appleBreakers["server-api"]?.openSinceMs == nil)
            pipeline.simulator.startOutage(SimulatedOutage(mode: .off, durationMs: 0))
            for ticket in tickets {
                let ended = try await pipeline.terminal(ticket, timeout: .seconds(60))
                #expect(ended.status == .granted, "\(ticket): \(ended.status) \(ended.reason ?? "")")
            }
            #expect(try await pipeline.length(pipeline.configuration.keys.dead) == 0)
            let state = try await pipeline.store.appleBreakerState(.verifyReceipt)
            #expect(state["opened_at"] == nil && state["closed_at"] != nil, "\(state)")
        }
    }
}

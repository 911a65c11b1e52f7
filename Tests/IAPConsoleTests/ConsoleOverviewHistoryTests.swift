import Foundation
import PipelineCore
import PipelineTestSupport
import Testing

/// The overview's last hour: the intakes' samples (a minute each) charted as bars drawn on the
/// server (jobs waiting, events a minute, dead letters), and the same minutes in its JSON twin.
@Suite struct ConsoleOverviewHistoryTests {
    @Test func theOverviewChartsTheLastHour() async throws {
        try await ConsoleHarness.withConsole(startWorkers: false) { pipeline, console in
            let minute = currentTimeMs() / 60_000 * 60_000
            // Two minutes a few minutes back (the running intake samples only the minute it is in).
            for (at, events, dead) in [(minute - 180_000, 100, 1), (minute - 120_000, 105, 3)] {
                let sample = QueueSample(depths: ["verify": 3, "grant": 1], oldestAgeMs: [:], retry: 2, dead: dead, held: 0, events: events)
                #expect(try await pipeline.store.recordQueueSample(sample, now: at + 5_000))
            }
            let session = try await console.signIn("vera")
            let page = try await console.send(.GET, "/", cookie: session)
            #expect(page.status == 200 && page.body.contains("<h2>The last hour</h2>"))
            for series in ["queued", "events", "dead"] { #expect(page.body.contains("<section class=\"chart\" data-series=\"\(series)\">"), "\(series)") }
            let label = { (at: Int64) in String(format: "%02d:%02d", (at / 60_000 % 1440) / 60, at / 60_000 % 60) }
            #expect(page.body.contains("<title>\(label(minute - 120_000)) UTC: 5 events a minute</title>"), "\(page.body)")
            #expect(page.body.contains("<title>\(label(minute - 120_000)) UTC: 3 dead letters</title>"))
            #expect(page.body.contains("<title>\(label(minute - 180_000)) UTC: 4 jobs waiting</title>"))

            let json = try await console.send(.GET, "/", cookie: session, headers: [("Accept", "application/json")])
            let twin = try #require(try JSONSerialization.jsonObject(with: Data(json.body.utf8)) as? [String: Any])
            let lastHour = try #require(twin["lastHour"] as? [[String: Any]])
            let seeded = lastHour.prefix(2)
            #expect(seeded.map { $0["queued"] as? Int } == [4, 4] && seeded.map { $0["dead"] as? Int } == [1, 3])
            #expect(seeded.last?["events_per_minute"] as? Int == 5 && seeded.first?["events_per_minute"] == nil)
        }
    }
}

import AppleSimulator
import AsyncHTTPClient
import ClusterHarness
import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import NIOConcurrencyHelpers
import RedisClient

/// The fault drill: per trial, a fresh pipeline of real processes takes a stream of receipts while
/// faults are injected; then it drains and its books are checked.
package struct Drill: Sendable {
    package let settings: DrillSettings
    /// Where progress lines go (the table is the caller's to print).
    package let progress: @Sendable (String) -> Void

    package init(settings: DrillSettings, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.settings = settings
        self.progress = progress
    }

    package func run() async throws -> [TrialReport] {
        try settings.cluster.checkExecutables()
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(timeout: .init(connect: .seconds(2))))
        var reports: [TrialReport] = []
        do {
            for trial in 1...settings.trials {
                let report = try await runTrial(trial, http: http)
                progress(
                    "trial \(trial): \(report.passed ? "ok" : "FAILED"): lost \(report.lost), double grants \(report.doubleGrants), "
                        + "stuck \(report.stuck), wrong \(report.wrongOutcomes), anomalies \(report.anomalies), "
                        + "drained in \(String(format: "%.1f", report.drainSeconds)) s")
                reports.append(report)
            }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        return reports
    }

    /// Has apple-sim deliver a REFUND notification as often as planned (one UUID, as Apple's
    /// retries), again (as Apple does) until the intake has answered 200 once: a kill or an
    /// outage may refuse it.
    func deliverRefund(_ receipt: PlannedReceipt, to cluster: LocalCluster) async throws {
        guard let refund = receipt.refund, let unit = receipt.unit else { return }
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let statuses = (try? await cluster.deliverNotification(type: "REFUND", transactionID: unit, times: refund.times)) ?? []
            if statuses.contains(200) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw DrillError("the REFUND of \(unit) was never accepted")
    }

    /// A third into the submission, verifyReceipt answers 503 for `settings.appleOutage`; returns
    /// once it is over and the breaker closed again (or a minute after), having said how long the
    /// fleet's breaker took to open and, once Apple answered again, to close (its hash, read every
    /// 100 ms; Redis may be down a moment under the other faults: such reads are skipped).
    static func longAppleOutage(
        _ cluster: LocalCluster, _ settings: DrillSettings, progress: @Sendable (String) -> Void
    ) async throws {
        let submitting = Double(settings.receiptsPerTrial) / Double(max(settings.submitRate, 1))
        try await Task.sleep(for: .seconds(submitting / 3))
        let length = settings.appleOutage
        let redis = RedisClient(configuration: try RedisConfiguration(url: cluster.redisURL), poolSize: 1)
        defer { Task { await redis.close() } }
        let store = PipelineStore(redis: redis, keys: cluster.keys)
        func breaker() async -> [String: String]? { try? await store.appleBreakerState(.verifyReceipt) }
        let openingsBefore = Int(await breaker()?["openings"] ?? "0") ?? 0
        progress("apple-sim: verifyReceipt down for \(length.components.seconds) s")
        let started = ContinuousClock.now
        try await cluster.appleOutage(SimulatedOutage(mode: .unavailable, durationMs: Int(length.milliseconds)))
        var opened: Duration?
        while ContinuousClock.now - started < length {
            if opened == nil, let state = await breaker(), Int(state["openings"] ?? "0") ?? 0 > openingsBefore {
                opened = ContinuousClock.now - started
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let ended = ContinuousClock.now
        var closed: Duration?
        while closed == nil && ContinuousClock.now - ended < .seconds(60) {
            if let state = await breaker(), state["opened_at"] == nil { closed = ContinuousClock.now - ended }
            if closed == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        func seconds(_ duration: Duration?) -> String { duration.map { String(format: "%.1f s", Double($0.milliseconds) / 1000) } ?? "never" }
        progress("apple-sim: verifyReceipt answers again; the breaker opened \(seconds(opened)) into the outage, "
            + "closed \(seconds(closed)) after it ended")
    }
}

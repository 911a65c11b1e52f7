import AppleJWS
import AppleSimulator
import AppStoreServerAPI
@preconcurrency import Crypto
import Foundation
import Hummingbird
import PipelineCore
import IAPStages
import IAPOperations
import Logging
import RedisClient
import ServiceLifecycle

/// The `notifications` scenario: apple-sim (in this process, serving real HTTP) holds `count`
/// REFUND notifications it never delivered; a fresh redis-server (no persistence) is the ledger.
/// Measures what the standing sweep costs when there is nothing to do (a window with no failures:
/// one Get Notification History call per environment and the two lease scripts), and how long a
/// backfill of the `count` notifications takes through the real client, the intake's checks (each
/// notification's and its transaction's ES256 signatures and chains) and `accept_notification`,
/// and a rerun that finds them all stored.
package struct NotificationHistoryBench: Sendable {
    package var count: Int
    package var idleSweeps: Int

    package init(count: Int = 10_000, idleSweeps: Int = 200) {
        self.count = count
        self.idleSweeps = idleSweeps
    }

    package func run(workDirectory: URL, progress: @Sendable (String) -> Void) async throws -> NotificationHistoryBenchResult {
        let apple = try await InProcessApple.start(in: workDirectory, name: "notifications")
        defer { Task { await apple.stop() } }
        let (simulator, configuration, scratch, logger) = (apple.simulator, apple.configuration, apple.scratch, apple.logger)
        let store = PipelineStore(redis: scratch.client, keys: configuration.keys)
        guard let walk = try NotificationHistoryWalk.make(configuration, store: store, logger: logger) else {
            throw BenchError("the walk needs the Server API key and bundle ids")
        }
        defer { Task { await walk.client.shutdown() } }

        let idleMs = try await idleSweepMs(walk: walk, store: store, logger: logger)
        progress(String(format: "notifications: an idle sweep (2 environments) takes %.2f ms", idleMs))

        // `count` refunds Apple signed and never delivered (no notification URL is set).
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 1
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for index in 0..<count {
            let id = String(8_000_000_000_000_000 + index)
            _ = try simulator.serverAPI.register(JWSTransaction(
                transactionID: id, bundleID: Self.bundleID, productID: "gems.small", purchaseDate: now, type: "Consumable",
                environment: "Sandbox"))
            _ = try simulator.serverAPI.signedNotification(type: "REFUND", transactionID: id)
        }
        progress("notifications: apple-sim holds \(count) undelivered REFUND notifications")
        let query = NotificationHistoryQuery(startDate: start, endDate: Int64(Date().timeIntervalSince1970 * 1000) + 1)
        let backfillStart = ContinuousClock.now
        let first = await walk.run(query, environment: .sandbox)
        let backfillSeconds = (ContinuousClock.now - backfillStart) / .seconds(1)
        guard first.complete, first.new == count else { throw BenchError("the backfill stored \(first.new) of \(count): \(first.error ?? "")") }
        progress(String(format: "notifications: backfill of %d in %.1f s (%d pages)", count, backfillSeconds, first.pages))
        let rerunStart = ContinuousClock.now
        let again = await walk.run(query, environment: .sandbox)
        let rerunSeconds = (ContinuousClock.now - rerunStart) / .seconds(1)
        guard again.complete, again.seenBefore == count else { throw BenchError("the rerun saw \(again.seenBefore) of \(count) stored") }
        return NotificationHistoryBenchResult(
            notifications: count, idleSweepMs: idleMs, idleSweepAppleCalls: 2, backfillSeconds: backfillSeconds,
            backfillPages: first.pages, rerunSeconds: rerunSeconds)
    }

    /// How long a sweep takes with nothing to do: every turn due (period 1 ms), each
    /// environment's window empty; the mean of `idleSweeps` turns.
    private func idleSweepMs(walk: NotificationHistoryWalk, store: PipelineStore, logger: Logger) async throws -> Double {
        let sweeper = NotificationSweeper(walk: walk, store: store, period: .milliseconds(1), logger: logger)
        _ = await sweeper.turn()
        var swept = 0
        var sweeping: Duration = .zero
        while swept < idleSweeps {
            let started = ContinuousClock.now
            switch await sweeper.turn() {
            case .swept(let reports):
                guard reports.allSatisfy({ $0.complete && $0.seen == 0 }) else {
                    throw BenchError("an idle sweep did not complete empty: \(reports)")
                }
                sweeping += ContinuousClock.now - started
                swept += 1
            case .waited:
                try await Task.sleep(for: .milliseconds(1))  // the next is due a millisecond after the last
            case .failed(let why):
                throw BenchError("an idle sweep failed: \(why)")
            }
        }
        return sweeping / .milliseconds(1) / Double(idleSweeps)
    }

    static let bundleID = InProcessApple.bundleID
}

package struct NotificationHistoryBenchResult: Codable, Sendable {
    package var notifications: Int
    /// One sweep turn with nothing to do: claim, one empty history page per environment, finish.
    package var idleSweepMs: Double
    package var idleSweepAppleCalls: Int
    package var backfillSeconds: Double
    package var backfillPages: Int
    /// The same window again: every notification `seen_before`.
    package var rerunSeconds: Double

    package var summary: String {
        String(
            format: "an idle sweep %.2f ms and %d Apple calls; backfill of %d notifications in %.1f s (%.0f/s, %d pages), rerun %.1f s",
            idleSweepMs, idleSweepAppleCalls, notifications, backfillSeconds, Double(notifications) / max(backfillSeconds, 0.001),
            backfillPages, rerunSeconds)
    }
}

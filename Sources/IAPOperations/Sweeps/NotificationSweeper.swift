import AppStoreServerAPI
import Foundation
import IAPSettings
import IAPStages
import Logging
import PipelineCore
import ServiceLifecycle

/// The standing notification sweep (`IAP_NOTIFICATION_SWEEP_S`), a service of every notifier; one
/// process of the fleet sweeps at a time (`claim_notification_sweep`). Every period it reads
/// Apple's notification history with `onlyFailures` — what never reached the intake, including
/// what Apple is still retrying — over the window since the last sweep's end, one period of
/// overlap before it, and stores each notification as the intake would. An intake outage longer
/// than Apple's five retries, or a deploy that answered 4xx, heals with no operator.
///
/// With several apps (`IAP_APPS_FILE`) each app's history is read with its own key, under its own
/// cursors (`<bundle id>:Production`, …).
package struct NotificationSweeper: Service {
    /// One walk per app, each with the prefix of its cursors' names (`""` for one app).
    package let walks: [(cursor: String, walk: NotificationHistoryWalk)]
    package let store: PipelineStore
    package let schedule: LeasedSweep
    package var period: Duration { schedule.period }
    package let environments: [ServerAPIEnvironment]
    package let logger: Logger
    var owner: String { schedule.owner }
    var lease: Duration { schedule.lease }

    package init(
        walk: NotificationHistoryWalk, store: PipelineStore, period: Duration,
        environments: [ServerAPIEnvironment] = [.production, .sandbox], logger: Logger
    ) {
        self.init(walks: [("", walk)], store: store, period: period, environments: environments, logger: logger)
    }

    package init(
        walks: [(cursor: String, walk: NotificationHistoryWalk)], store: PipelineStore, period: Duration,
        environments: [ServerAPIEnvironment] = [.production, .sandbox], logger: Logger
    ) {
        self.walks = walks
        self.store = store
        self.schedule = LeasedSweep(period: period)
        self.environments = environments
        self.logger = logger
    }

    /// How far back a first sweep (no cursor yet) reads: seven days, past the six and a half over
    /// which Apple retries, so whatever Apple may have given up on is in it.
    package static let firstLookBack: Duration = .seconds(7 * 86400)

    package func run() async throws {
        await schedule.run { await look(turn()) }
    }

    /// What one look did.
    package enum Turn: Sendable, Equatable {
        /// This process swept: what each environment's walk found.
        case swept([NotificationHistoryWalk.Report])
        /// Not this process's turn (not due, or another process sweeps).
        case waited
        /// Redis could not be asked.
        case failed(String)
    }

    /// Sweeps when it is this process's turn; returns how long to wait before looking again.
    @discardableResult
    package func sweepOnce() async -> Duration {
        schedule.wait(after: look(await turn()))
    }

    private func look(_ turn: Turn) -> LeasedSweep.Look {
        switch turn {
        case .swept(let reports): .swept(complete: reports.allSatisfy(\.complete))
        case .waited: .waited
        case .failed: .failed
        }
    }

    /// One look: claims the sweep when due and free, walks each environment, finishes.
    package func turn() async -> Turn {
        let (now, cursors): (Int64, [String: Int64])
        switch await schedule.claim("notification sweep", logger: logger, by: { try await store.claimNotificationSweep(owner: $0, lease: $1) }) {
        case .success(let claimed): (now, cursors) = claimed
        case .failure(.waited): return .waited
        case .failure(.failed(let error)): return .failed(error)
        }
        let periodMs = period.milliseconds
        var reports: [NotificationHistoryWalk.Report] = []
        var reached: [String: Int64] = [:]
        for (prefix, walk) in walks {
            for environment in environments {
                let key = prefix + (environment == .sandbox ? "Sandbox" : "Production")
                // From one period before the last window's end (a first sweep: `firstLookBack`),
                // never earlier than Apple keeps (an hour of margin).
                let from = cursors[key].map { $0 - periodMs } ?? now - max(Self.firstLookBack.milliseconds, 2 * periodMs)
                let start = max(from, now - NotificationHistoryQuery.keptMs + 3_600_000)
                let query = NotificationHistoryQuery(startDate: start, endDate: now, onlyFailures: true)
                let report = await walk.run(query, environment: environment) { [store, owner, lease] _ in
                    guard try await store.claimNotificationSweep(owner: owner, lease: lease, renew: true) != .lost else {
                        throw SweepLeaseLost()
                    }
                }
                if report.complete { reached[key] = now }
                if report.new > 0 || report.invalid > 0 || !report.complete {
                    logger.notice("notification sweep", metadata: [
                        "environment": "\(report.environment)", "seen": "\(report.seen)", "new": "\(report.new)",
                        "invalid": "\(report.invalid)", "complete": "\(report.complete)", "error": "\(report.error ?? "")",
                    ])
                }
                PipelineMetrics.notificationSweep(complete: report.complete, recovered: report.new)
                reports.append(report)
            }
        }
        let complete = reports.allSatisfy(\.complete)
        do {
            try await store.finishNotificationSweep(
                owner: owner, nextIn: schedule.wait(after: .swept(complete: complete)), cursors: reached,
                seen: reports.reduce(0) { $0 + $1.seen }, new: reports.reduce(0) { $0 + $1.new },
                invalid: reports.reduce(0) { $0 + $1.invalid }, error: reports.compactMap(\.error).first)
        } catch {
            // The lease expires by itself; the next sweep reads this window again.
            logger.warning("cannot finish the notification sweep", metadata: ["error": "\(error)"])
        }
        return .swept(reports)
    }

    struct SweepLeaseLost: Error, CustomStringConvertible {
        var description: String { "another process took over the sweep (this one held its lease too long)" }
    }
}

extension NotificationSweeper {
    /// The sweep a notifier runs with these settings: `nil` when `IAP_NOTIFICATION_SWEEP_S` is 0,
    /// or without the Server API key or bundle ids (said in the log). With `IAP_APPS_FILE`, one walk
    /// per app with a key. Its clients are shut down by the caller (`walks`' `client`).
    package static func make(_ configuration: PipelineConfiguration, store: PipelineStore, logger: Logger) throws(ConfigurationError) -> NotificationSweeper? {
        guard configuration.sweeps.notifications > .zero else { return nil }
        let walks = try NotificationHistoryWalk.makeEach(configuration, store: store, logger: logger)
        guard !walks.isEmpty else {
            logger.warning("the notification sweep is off: it needs the App Store Server API key (IAP_APPLE_API_*) and IAP_BUNDLE_IDS")
            return nil
        }
        let named = walks.map { (cursor: configuration.appsFile == nil ? "" : "\($0.bundleID):", walk: $0.walk) }
        return NotificationSweeper(walks: named, store: store, period: configuration.sweeps.notifications, logger: logger)
    }
}

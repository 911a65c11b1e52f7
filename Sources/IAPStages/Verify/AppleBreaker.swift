import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import PipelineCore
import RedisClient

/// The fleet's Apple breakers (one per `AppleService`) as one verify process sees them; their
/// state is in Redis (`apple-breaker:<service>`). Failures are told at once (`failed`: the script
/// says whether the job spends an attempt); answers are counted here and told once a round
/// (`tellAnswers`), or at once while the breaker is open (a probe's answer closes it). While a
/// breaker is open a job for its service asks Apple only when it is the fleet's probe (`turn`);
/// the others wait in the retry set for a later turn, spending nothing.
package final class AppleBreaker: Sendable {
    package let settings: AppleBreakerSettings
    private let store: PipelineStore
    private let logger: Logger
    private let state = NIOLockedValueBox([AppleService: ServiceState]())
    /// Answers are told at most this often while closed (the quiet time is two of these).
    static let round: Duration = .seconds(1)

    private struct ServiceState {
        var open = false
        var answers = 0
        /// When the latest of `answers` came (told as an age: Redis keeps when Apple answered).
        var latestAnswer: ContinuousClock.Instant?
        var lastTold: ContinuousClock.Instant?
    }

    package init(store: PipelineStore, settings: AppleBreakerSettings, logger: Logger) {
        self.store = store
        self.settings = settings
        self.logger = logger
        for service in AppleService.allCases {
            Gauge(label: "iap_apple_breaker_open", dimensions: [("service", service.rawValue)]).record(0)
            for to in ["open", "closed"] {
                _ = Counter(label: "iap_apple_breaker_transitions_total", dimensions: [("service", service.rawValue), ("to", to)])
            }
        }
    }

    /// Whether this process last saw `service`'s breaker open.
    package func isOpen(_ service: AppleService) -> Bool { state.withLockedValue { $0[service]?.open ?? false } }

    /// A job's turn to ask `service`: `.closed` unless this process saw its breaker open; then the
    /// fleet's probe (one an interval) or a wait. Redis unreachable: a wait of one interval.
    package func turn(_ service: AppleService) async -> ProbeTurn {
        guard isOpen(service) else { return .closed }
        guard let turn = try? await store.takeAppleProbe(service, probe: settings.probe) else { return .wait(settings.probe) }
        if turn == .closed { see(service, open: false) }
        return turn
    }

    /// `service` answered a verify job (valid or not). While open the answer is told at once: it closes the breaker.
    package func answered(_ service: AppleService) async {
        let open = state.withLockedValue { state -> Bool in
            state[service, default: ServiceState()].answers += 1
            state[service]!.latestAnswer = .now
            return state[service]!.open
        }
        if open { await tellAnswers(service, force: true) }
    }

    /// Every service's answers counted since the last round (once a second per process), and
    /// whether another process opened a breaker meanwhile.
    package func tellAnswers() async {
        for service in AppleService.allCases { await tellAnswers(service, force: false) }
    }

    private func tellAnswers(_ service: AppleService, force: Bool) async {
        let taken = state.withLockedValue { state -> (count: Int, age: Duration)? in
            var entry = state[service, default: ServiceState()]
            defer { state[service] = entry }
            if !force, let last = entry.lastTold, ContinuousClock.now - last < Self.round { return nil }
            entry.lastTold = .now
            defer { entry.answers = 0 }
            return (entry.answers, entry.latestAnswer.map { ContinuousClock.now - $0 } ?? .zero)
        }
        guard let (count, age) = taken.map({ ($0.count, $0.age) }) else { return }
        do {
            let told = try await store.recordAppleAnswers(service, count: count, age: age)
            if let after = told.closedAfter {
                Counter(label: "iap_apple_breaker_transitions_total", dimensions: [("service", service.rawValue), ("to", "closed")])
                    .increment()
                logger.notice("Apple answers again: the breaker closes", metadata: [
                    "service": "\(service.rawValue)", "open_ms": "\(after.milliseconds)",
                ])
            }
            see(service, open: told.open)
        } catch {
            // Not told: counted again next round (a late answer only delays a close or lets a failure spend).
            state.withLockedValue { $0[service, default: ServiceState()].answers += count }
        }
    }

    /// `service` failed a verify job: whether the job spends an attempt, and when it failed
    /// (Redis's ms, which the job carries to its next failure). `nil` when Redis could not be
    /// asked: the failure then spends, as without a breaker.
    package func failed(_ service: AppleService, reason: String, failedBefore: Int64?) async -> AppleFailureVerdict? {
        guard let verdict = try? await store.recordAppleFailure(
            service, reason: reason, failedBefore: failedBefore, settings: settings)
        else { return nil }
        if verdict.state == .opened {
            Counter(label: "iap_apple_breaker_transitions_total", dimensions: [("service", service.rawValue), ("to", "open")])
                .increment()
            logger.error("Apple fails for everyone: the breaker opens; its jobs wait in the retry set, one probe an interval", metadata: [
                "service": "\(service.rawValue)", "reason": "\(reason)", "probe_ms": "\(settings.probe.milliseconds)",
            ])
        }
        see(service, open: verdict.state != .closed)
        return verdict
    }

    /// A wait for the next probe, spread over up to three more intervals, so that the jobs a
    /// breaker holds do not all come back at the same moment.
    package func spread(_ wait: Duration) -> Duration {
        wait + .milliseconds(Int64.random(in: 0...max(settings.probe.milliseconds * 3, 0)))
    }

    private func see(_ service: AppleService, open: Bool) {
        state.withLockedValue { $0[service, default: ServiceState()].open = open }
        Gauge(label: "iap_apple_breaker_open", dimensions: [("service", service.rawValue)]).record(open ? 1 : 0)
    }
}

extension PipelineStore {
    /// `record_apple_failure`: see `AppleBreaker.failed` (`now`: a test's pinned time).
    package func recordAppleFailure(
        _ service: AppleService, reason: String, failedBefore: Int64?, settings: AppleBreakerSettings, now: Int64? = nil
    ) async throws -> AppleFailureVerdict {
        try await run(RecordAppleFailure(keys, service: service, reason: reason, failedBefore: failedBefore, settings: settings, now: now))
    }

    /// `record_apple_answers`: `count` answers, the latest `age` ago (0: only read whether the breaker is open).
    @discardableResult
    package func recordAppleAnswers(
        _ service: AppleService, count: Int, age: Duration = .zero, now: Int64? = nil
    ) async throws -> AppleAnswersRecorded {
        try await run(RecordAppleAnswers(keys, service: service, count: count, age: age, now: now))
    }

    /// `take_apple_probe`: `.closed`, `.probe` (this job asks), or `.wait` until the next probe.
    package func takeAppleProbe(_ service: AppleService, probe: Duration, now: Int64? = nil) async throws -> ProbeTurn {
        try await run(TakeAppleProbe(keys, service: service, probe: probe, now: now))
    }

    /// A breaker's hash as stored (empty: never told anything).
    package func appleBreakerState(_ service: AppleService) async throws -> [String: String] {
        try await redis.send("HGETALL", keys.appleBreaker(service)).stringDictionary
    }
}

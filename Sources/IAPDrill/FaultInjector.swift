import AppleSimulator
import ClusterHarness
import Foundation
import PipelineCore
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Breaks a running trial at random moments (exponential gaps, mean `1 / faultRate`), one fault
/// at a time, cycling through the chosen kinds in a shuffled order so each appears every round.
struct FaultInjector {
    let cluster: LocalCluster
    let settings: DrillSettings
    private var stageTurn = -1
    var rng: SeededGenerator
    private(set) var injected: [FaultKind: Int] = [:]
    private(set) var poisonPushed = 0
    private(set) var notificationOutages = 0
    /// Jobs the SIGTERMed processes held when signalled: each must be finished or handed back.
    private(set) var jobsHeldAtSigterm = 0
    /// Things that went wrong that are not about the books (a SIGTERM without exit 0).
    private(set) var anomalies: [String] = []
    private(set) var failovers: [LocalCluster.Failover] = []
    private(set) var reshards: [LocalCluster.Reshard] = []
    private var bag: [FaultKind] = []

    init(cluster: LocalCluster, settings: DrillSettings, rng: SeededGenerator) {
        self.cluster = cluster
        self.settings = settings
        self.rng = rng
    }

    /// Injects faults until `finished` is set and every chosen kind has been injected
    /// `faultsPerKind` times.
    mutating func run(until finished: NIOLockedValueBox<Bool>) async throws {
        guard !settings.faults.isEmpty, settings.faultRate > 0 else { return }
        while !(finished.withLockedValue { $0 } && settings.faults.allSatisfy { injected[$0, default: 0] >= settings.faultsPerKind }) {
            let gap = -log(1 - Double.random(in: 0..<1, using: &rng)) / settings.faultRate
            try await Task.sleep(for: .milliseconds(Int(gap * 1000)))
            let kind = nextKind()
            try await inject(kind)
            injected[kind, default: 0] += 1
        }
    }

    private mutating func nextKind() -> FaultKind {
        if bag.isEmpty { bag = settings.faults.shuffled(using: &rng) }
        return bag.removeLast()
    }

    private mutating func inject(_ kind: FaultKind) async throws {
        switch kind {
        case .killStage:
            let (stage, index) = await pickWorker()
            _ = try await cluster.replaceWorker(stage, at: index, signal: SIGKILL, pauseMs: Int.random(in: 0..<500, using: &rng))
        case .killRedis:
            try await cluster.crashRedis(pauseMs: Int.random(in: 0..<500, using: &rng))
        case .killIntake:
            try await cluster.crashIntake(pauseMs: Int.random(in: 0..<500, using: &rng))
        case .appleOutage:
            let mode: SimulatedOutage.Mode = Bool.random(using: &rng) ? .unavailable : .timeout
            try await cluster.appleOutage(SimulatedOutage(mode: mode, durationMs: Int.random(in: 1000...3000, using: &rng)))
        case .sigterm:
            // The process holding the most jobs, so the graceful stop has work to finish or hand back.
            let busiest = try await cluster.jobsHeld().max { $0.jobs < $1.jobs }
            let (stage, index) = if let busiest, busiest.jobs > 0 { (busiest.stage, busiest.index) } else { await pickWorker() }
            jobsHeldAtSigterm += busiest?.jobs ?? 0
            let (name, exit) = try await cluster.replaceWorker(stage, at: index, signal: SIGTERM, pauseMs: 0)
            if !exit.isClean { anomalies.append("\(name) did not exit 0 on SIGTERM (\(exit))") }
        case .killWebhook:
            // Without webhook processes, any stage's.
            let hooks = await cluster.workerCount(.webhook)
            let (stage, index) = hooks > 0 ? (Stage.webhook, Int.random(in: 0..<hooks, using: &rng)) : await pickWorker()
            _ = try await cluster.replaceWorker(stage, at: index, signal: SIGKILL, pauseMs: Int.random(in: 0..<500, using: &rng))
        case .notificationOutage:
            // Longer than the whole compressed retry schedule with every attempt's deadline.
            let retries = DrillSettings.notificationRetryDelaysMs.reduce(0, +)
            try await cluster.beginNotificationOutage()
            try await Task.sleep(for: .milliseconds(retries + Int64.random(in: 1000...3000, using: &rng)))
            try await cluster.endNotificationOutage()
            notificationOutages += 1
        case .poison:
            poisonPushed += try await cluster.poison(nonce: rng.next())
        case .stall:
            let (stage, index) = await pickWorker()
            try await cluster.stallWorker(stage, at: index, forMs: Int(settings.lease.milliseconds) + 1500)
        case .failover:
            failovers.append(try await cluster.failover())
        case .reshard:
            // Every other move by hand, held half-moved 0.5–2 s; the others by redis-cli.
            let hold: Duration? = reshards.count % 2 == 0 ? .milliseconds(Int.random(in: 500...2000, using: &rng)) : nil
            reshards.append(try await cluster.reshard(holdHalfMoved: hold, pick: Int.random(in: 0..<16, using: &rng)))
        }
    }

    /// The stages take turns (each is hit as often as the others, the webhook's too); the process is random.
    private mutating func pickWorker() async -> (Stage, Int) {
        let stages = Stage.allCases.filter { settings.cluster.processesPerStage[$0, default: 0] > 0 }
        stageTurn += 1
        let stage = stages[stageTurn % stages.count]
        return (stage, Int.random(in: 0..<max(await cluster.workerCount(stage), 1), using: &rng))
    }
}

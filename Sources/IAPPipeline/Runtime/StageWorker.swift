import Foundation
import Logging
import NIOConcurrencyHelpers
import RedisClient
import ServiceLifecycle

/// Runs one stage's handler: takes jobs into its own in-flight list (in batches while the queue
/// is long, with BLMOVE when it is empty), handles up to `concurrency` at once, heartbeats, and
/// does the fleet's housekeeping (due retries, reaping) and the handler's own. It names no stage.
/// On graceful shutdown it stops taking jobs, lets those in flight finish within the grace
/// period, hands back any left and leaves the worker set.
public final class StageWorker: Service, Sendable {
    public let handler: any JobHandler
    public let settings: WorkerSettings
    public let context: WorkerContext
    private let stopSignal = AsyncStream<Void>.makeStream()
    /// When a heartbeat last reached Redis.
    private let lastHeartbeat = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
    /// Jobs being handled now, by payload: what the in-flight list holds beyond these is an orphan.
    private let handling = NIOLockedValueBox<[String: Int]>([:])

    public init(handler: any JobHandler, store: PipelineStore, settings: WorkerSettings, workerID: String? = nil, logger: Logger) {
        self.handler = handler
        self.settings = settings
        let id = workerID ?? Self.makeWorkerID()
        let member = "\(handler.stage.rawValue):\(id)"
        var logger = logger
        logger[metadataKey: "worker"] = "\(member)"
        self.context = WorkerContext(store: store, member: member, stage: handler.stage, logger: logger)
    }

    public var member: String { context.member }

    public func run() async throws {
        PipelineMetrics.prepare(stage: handler.stage, transitions: handler.transitions)
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.heartbeatLoop() }
                group.addTask { await self.housekeepingLoop() }
                await self.takeAndHandle()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.stop()
        }
        await handBack()
    }

    /// Stops taking jobs; those in flight finish (within the grace period).
    public func stop() {
        context.stopping.withLockedValue { $0 = true }
        stopSignal.continuation.yield()
    }

    /// What ends a wait on the task group.
    private enum Event {
        case handled
        case stopRequested
        case graceOver
    }

    /// The loop's own state between its steps.
    private struct Loop {
        /// Jobs being handled now.
        var running = 0
        var backoff = RedisRetryBackoff()
        var nextOrphanCheck: ContinuousClock.Instant
        /// A queue that was just found empty is waited on (BLMOVE) without asking take_jobs
        /// first, until a BLMOVE comes back at once (jobs are waiting again).
        var queueSeemsEmpty = false
    }

    /// Takes jobs and handles them, up to `concurrency` at once, until a stop; then drains. Each
    /// round: wait for free slots, check the heartbeat, adopt orphans when due, take, start.
    private func takeAndHandle() async {
        // The blocking connection is this loop's own: closed when the loop ends, before hand-back.
        let connection = context.store.redis.makeDedicatedConnection(forKey: context.store.keys.queue(handler.stage))
        context.logger.info("worker started", metadata: ["concurrency": "\(settings.concurrency)"])
        await withTaskGroup(of: Event.self) { group in
            // Wakes a loop that waits for a free slot when a stop is requested.
            group.addTask {
                for await _ in self.stopSignal.stream { break }
                return .stopRequested
            }
            var loop = Loop(nextOrphanCheck: .now + settings.lease)
            while !context.isStopping && !Task.isCancelled {
                // A busy worker takes again once a few slots are free, not at every single one: its
                // takes (and the marks and forwards of the jobs it starts together) then go in batches.
                if loop.running > settings.concurrency - settings.refill {
                    if await group.next() == .handled { loop.running -= 1 }
                    continue
                }
                // A worker that cannot heartbeat may be reaped at any moment: it takes nothing until it can.
                guard await heartbeatIsFresh(), await adoptOrphansIfDue(&loop, &group) else {
                    await loop.backoff.pause()
                    continue
                }
                for payload in await take(&loop, on: connection) {
                    loop.running += 1
                    handle(payload, in: &group)
                }
            }
            await drain(&group, running: loop.running)
            group.cancelAll()
        }
        await connection.close()
    }

    /// Once a lease, the jobs in this worker's list that no handler has are handled; `false` when
    /// the list could not be read.
    private func adoptOrphansIfDue(_ loop: inout Loop, _ group: inout TaskGroup<Event>) async -> Bool {
        guard ContinuousClock.now >= loop.nextOrphanCheck else { return true }
        guard let orphans = try? await orphans() else { return false }
        for payload in orphans {
            loop.running += 1
            handle(payload, in: &group)
        }
        loop.nextOrphanCheck = .now + settings.lease
        return true
    }

    /// A batch from a long queue (`take_jobs`), else one job by BLMOVE; none when Redis failed
    /// (after a pause: it may have moved jobs into our list and lost the reply, so orphans are
    /// looked for soon) or the wait ended empty.
    private func take(_ loop: inout Loop, on connection: RedisConnection) async -> [String] {
        do {
            let wanted = min(settings.concurrency - loop.running, settings.takeBatch)
            var taken: [String] = []
            if !loop.queueSeemsEmpty {
                taken = try await context.store.takeJobs(from: handler.stage, member: context.member, max: wanted)
                loop.queueSeemsEmpty = taken.count < wanted
            }
            if taken.isEmpty {
                let asked = ContinuousClock.now
                if let payload = try await context.store.take(
                    from: handler.stage, member: context.member, on: connection, block: settings.block)
                {
                    taken = [payload]
                    loop.queueSeemsEmpty = ContinuousClock.now - asked > Self.blockedLongerThan
                }
            }
            loop.backoff.reset()
            return taken
        } catch {
            context.logger.warning("cannot take jobs", metadata: ["error": "\(error)"])
            loop.nextOrphanCheck = .now
            loop.queueSeemsEmpty = false
            await loop.backoff.pause()
            return []
        }
    }

    /// Jobs in flight get the grace period, then are cancelled (and handed back).
    private func drain(_ group: inout TaskGroup<Event>, running: Int) async {
        guard running > 0 else { return }
        var running = running
        let grace = settings.shutdownGrace
        group.addTask {
            try? await Task.sleep(for: grace)
            return .graceOver
        }
        while running > 0, let event = await group.next() {
            switch event {
            case .handled:
                running -= 1
            case .graceOver:
                context.logger.warning("grace period over, abandoning jobs in flight", metadata: ["jobs": "\(running)"])
                group.cancelAll()
            case .stopRequested:
                continue
            }
        }
    }

    private func handle(_ payload: String, in group: inout TaskGroup<Event>) {
        handling.withLockedValue { $0[payload, default: 0] += 1 }
        group.addTask {
            let started = ContinuousClock.now
            await self.handler.handle(payload, worker: self.context)
            PipelineMetrics.jobHandled(stage: self.handler.stage, took: ContinuousClock.now - started)
            self.handling.withLockedValue { held in
                held[payload, default: 1] -= 1
                if held[payload] == 0 { held[payload] = nil }
            }
            return .handled
        }
    }

    /// Jobs in this worker's in-flight list that no handler has: a BLMOVE whose reply was lost,
    /// or a handler that gave up. Nobody else will ever move them while this worker lives.
    private func orphans() async throws -> [String] {
        // Who holds what, read before the list: a handler finishing in between then counts as
        // holding a job the list no longer shows (harmless), never the other way round.
        var held = handling.withLockedValue { $0 }
        let listed = try await context.store.inflightJobs(member: context.member)
        let orphans = listed.filter { payload in
            guard let count = held[payload], count > 0 else { return true }
            held[payload] = count - 1
            return false
        }
        if !orphans.isEmpty {
            context.logger.warning("adopting jobs left in this worker's in-flight list", metadata: ["jobs": "\(orphans.count)"])
        }
        return orphans
    }

    private func heartbeatIsFresh() async -> Bool {
        let fresh = lastHeartbeat.withLockedValue { $0 }.map { ContinuousClock.now - $0 < settings.lease / 2 } ?? false
        if fresh { return true }
        return await heartbeat()
    }

    @discardableResult
    private func heartbeat() async -> Bool {
        do {
            try await context.store.heartbeat(member: context.member)
            lastHeartbeat.withLockedValue { $0 = .now }
            return true
        } catch {
            context.logger.warning("heartbeat failed", metadata: ["error": "\(error)"])
            return false
        }
    }

    private func handBack() async {
        // With Redis gone for longer than the grace period, the reaper returns the jobs later instead.
        let returned = await context.transition(RequeueInflight.self, giveUpAfter: max(settings.shutdownGrace, .seconds(1))) {
            try await context.store.requeueInflight(member: context.member, stage: handler.stage)
        }
        context.logger.info("worker stopped", metadata: ["returned": "\(returned ?? 0)"])
    }

    private func heartbeatLoop() async {
        let interval = max(settings.lease / 3, .milliseconds(100))
        while !Task.isCancelled {
            await heartbeat()
            try? await Task.sleep(for: interval)
        }
    }

    /// The fleet's housekeeping (due retries, reaping) and the stage's own (`JobHandler.housekeeping`).
    private func housekeepingLoop() async {
        while !Task.isCancelled {
            do {
                try await context.store.promoteDueRetries()
                try await handler.housekeeping(context)
                try await reap()
            } catch {
                context.logger.warning("housekeeping failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: settings.housekeeping)
        }
    }

    private func reap() async throws {
        let reaped = try await context.store.reapExpiredWorkers(
            reaper: context.member, lease: settings.lease, maxRedeliveries: settings.maxRedeliveries,
            lock: settings.housekeeping, forgetAfter: settings.forgetAfter)
        PipelineMetrics.reaped(workers: reaped.workers, returned: reaped.returned, deadLettered: reaped.deadLettered)
        if reaped.workers > 0 {
            context.logger.warning("reaped workers past their lease", metadata: [
                "workers": "\(reaped.workers)", "returned": "\(reaped.returned)", "dead": "\(reaped.deadLettered)",
            ])
        }
    }

    /// A BLMOVE that answers later than this waited for its job: the queue was empty.
    static let blockedLongerThan = Duration.milliseconds(1)

    static func makeWorkerID() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        return "\(host)-\(ProcessInfo.processInfo.processIdentifier)-\(suffix)"
    }
}

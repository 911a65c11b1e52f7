import Foundation
import Logging
import NIOConcurrencyHelpers
import RedisClient
import ServiceLifecycle

/// Runs one stage: takes jobs into its own in-flight list (in batches while the queue is long,
/// with BLMOVE when it is empty), handles up to `concurrency` at once, heartbeats, and does the
/// fleet's housekeeping (due retries, reaping).
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

    private func takeAndHandle() async {
        // The blocking connection is this loop's own: closed when the loop ends, before hand-back.
        let connection = context.store.redis.makeDedicatedConnection()
        context.logger.info("worker started", metadata: ["concurrency": "\(settings.concurrency)"])
        await withTaskGroup(of: Event.self) { group in
            // Wakes a loop that waits for a free slot when a stop is requested.
            group.addTask {
                for await _ in self.stopSignal.stream { break }
                return .stopRequested
            }
            var running = 0
            var backoff = RedisRetryBackoff()
            var nextOrphanCheck = ContinuousClock.now + .milliseconds(settings.leaseMs)
            func pause() async { await backoff.pause() }
            // A busy worker takes again once a few slots are free, not at every single one: its
            // takes (and the marks and forwards of the jobs it starts together) then go in batches.
            let refill = settings.refill
            var queueSeemsEmpty = false
            while !context.isStopping && !Task.isCancelled {
                if running > settings.concurrency - refill {
                    if await group.next() == .handled { running -= 1 }
                    continue
                }
                // A worker that cannot heartbeat may be reaped at any moment: it takes nothing until it can.
                guard await heartbeatIsFresh() else {
                    await pause()
                    continue
                }
                if ContinuousClock.now >= nextOrphanCheck {
                    guard let orphans = try? await orphans() else {
                        await pause()
                        continue
                    }
                    for payload in orphans {
                        running += 1
                        handle(payload, in: &group)
                    }
                    nextOrphanCheck = ContinuousClock.now + .milliseconds(settings.leaseMs)
                }
                var taken: [String] = []
                do {
                    // A long queue is taken in batches; a queue that was just found empty is
                    // waited on (BLMOVE) without asking take_jobs first, until a BLMOVE comes back
                    // at once (jobs are waiting again).
                    let wanted = min(settings.concurrency - running, settings.takeBatch)
                    if !queueSeemsEmpty {
                        taken = try await context.store.takeJobs(from: handler.stage, member: context.member, max: wanted)
                        queueSeemsEmpty = taken.count < wanted
                    }
                    if taken.isEmpty {
                        let asked = ContinuousClock.now
                        if let payload = try await context.store.take(
                            from: handler.stage, member: context.member, on: connection, blockMs: settings.blockMs)
                        {
                            taken = [payload]
                            queueSeemsEmpty = ContinuousClock.now - asked > Self.blockedLongerThan
                        }
                    }
                    backoff.reset()
                } catch {
                    // Redis may have moved jobs into our list and lost the reply: look for them soon.
                    context.logger.warning("cannot take jobs", metadata: ["error": "\(error)"])
                    nextOrphanCheck = .now
                    queueSeemsEmpty = false
                    await pause()
                    continue
                }
                for payload in taken {
                    running += 1
                    handle(payload, in: &group)
                }
            }
            // Draining: jobs in flight get the grace period, then are cancelled (and handed back).
            if running > 0 {
                let graceMs = settings.shutdownGraceMs
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(graceMs))
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
            group.cancelAll()
        }
        await connection.close()
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
        let fresh = lastHeartbeat.withLockedValue { $0 }.map { ContinuousClock.now - $0 < .milliseconds(settings.leaseMs / 2) } ?? false
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
        let returned = await context.transition("requeue_inflight", giveUpAfterMs: max(settings.shutdownGraceMs, 1000)) {
            try await context.store.requeueInflight(member: context.member, stage: handler.stage)
        }
        context.logger.info("worker stopped", metadata: ["returned": "\(returned ?? 0)"])
    }

    private func heartbeatLoop() async {
        let interval = max(settings.leaseMs / 3, 100)
        while !Task.isCancelled {
            await heartbeat()
            try? await Task.sleep(for: .milliseconds(interval))
        }
    }

    private func housekeepingLoop() async {
        while !Task.isCancelled {
            do {
                try await context.store.promoteDueRetries()
                // The webhook workers move new fulfilment entries to their users' delivery lists.
                if handler.stage == .webhook {
                    while try await context.store.routeFulfilmentEvents(consumer: context.member, count: 500) == 500 {}
                }
                // Re-checks go to the verify stage: its workers queue them, the others need not.
                if handler.stage == .verify, let rechecks = settings.rechecks {
                    let queued = try await context.store.promoteDueRechecks(
                        schedule: rechecks.schedule, ticketTTLSeconds: rechecks.ticketTTLSeconds)
                    PipelineMetrics.rechecksQueued(queued)
                }
                let reaped = try await context.store.reapExpiredWorkers(
                    reaper: context.member, leaseMs: settings.leaseMs, maxRedeliveries: settings.maxRedeliveries,
                    lockMs: settings.housekeepingMs, forgetAfterMs: settings.forgetAfterMs)
                PipelineMetrics.reaped(workers: reaped.workers, returned: reaped.returned, deadLettered: reaped.deadLettered)
                if reaped.workers > 0 {
                    context.logger.warning("reaped workers past their lease", metadata: [
                        "workers": "\(reaped.workers)", "returned": "\(reaped.returned)", "dead": "\(reaped.deadLettered)",
                    ])
                }
            } catch {
                context.logger.warning("housekeeping failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .milliseconds(settings.housekeepingMs))
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

import AppleReceipt
import Foundation
import Logging
import NIOConcurrencyHelpers
import RedisClient
import ServiceLifecycle

/// Runs one stage's handler on one bucket's queue: takes jobs into its own in-flight list (in
/// batches while the queue is long, with BLMOVE when it is empty), handles them within the
/// process's budget of jobs (`JobSlots`, shared with the workers of the other buckets), heartbeats,
/// and does the bucket's housekeeping (due retries, reaping) and the handler's own. It names no
/// stage. On graceful shutdown it stops taking jobs, lets those in flight finish within the grace
/// period, hands back any left and leaves the worker set. `StageWorkers` runs one per bucket.
package final class StageWorker: Service, Sendable {
    package let handler: any JobHandler
    package let settings: WorkerSettings
    package let context: WorkerContext
    /// The process's budget of jobs in hand: this worker's own unless it is given one to share.
    package let slots: JobSlots
    /// When a heartbeat last reached Redis.
    private let lastHeartbeat = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
    /// Jobs being handled now: what the in-flight list holds beyond these is an orphan.
    private let handling = NIOLockedValueBox(JobsInHand())
    /// How many jobs are being handled now.
    private var running: Int { handling.withLockedValue { $0.count } }
    /// Each job's end, for the drain.
    private let finished = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))

    package init(
        handler: any JobHandler, store: PipelineStore, settings: WorkerSettings, workerID: String? = nil, slots: JobSlots? = nil,
        logger: Logger
    ) {
        self.handler = handler
        self.settings = settings
        self.slots = slots ?? JobSlots(count: settings.concurrency)
        let id = workerID ?? Self.makeWorkerID()
        let member = "\(handler.stage.rawValue):\(id)"
        var logger = logger
        logger[metadataKey: "worker"] = "\(member)"
        if store.keys.layout.count > 1 { logger[metadataKey: "bucket"] = "\(store.keys.bucket)" }
        self.context = WorkerContext(store: store, member: member, stage: handler.stage, logger: logger)
    }

    package var member: String { context.member }

    package func run() async throws {
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

    /// Stops taking jobs; those in flight finish (within the grace period). A shared budget stops
    /// with it: the workers sharing it are one process's, which stops as a whole.
    package func stop() {
        context.stopping.withLockedValue { $0 = true }
        slots.stop()
    }

    /// The loop's own state between its steps.
    private struct Loop {
        var backoff = RedisRetryBackoff()
        var nextOrphanCheck: ContinuousClock.Instant
        /// A queue that was just found empty is waited on (BLMOVE) without asking take_jobs
        /// first (nor holding slots), until a BLMOVE comes back at once (jobs are waiting again).
        var queueSeemsEmpty = false
    }

    /// Takes jobs and handles them within the budget until a stop; then drains. Each round: check
    /// the heartbeat, adopt orphans when due, get slots (unless the queue seems empty), take, start.
    private func takeAndHandle() async {
        // The blocking connection is this loop's own: closed when the loop ends, before hand-back.
        let connection = context.store.redis.makeDedicatedConnection(forKey: context.store.keys.queue(handler.stage))
        context.logger.info("worker started", metadata: ["concurrency": "\(settings.concurrency)"])
        await withDiscardingTaskGroup { group in
            var loop = Loop(nextOrphanCheck: .now + settings.orphanCheck)
            while !context.isStopping && !Task.isCancelled {
                // A worker that cannot heartbeat may be reaped at any moment: it takes nothing until it can.
                guard await heartbeatIsFresh(), await adoptOrphansIfDue(&loop, &group) else {
                    await loop.backoff.pause()
                    continue
                }
                // A busy process takes again once a few slots are free, not at every single one: its
                // takes (and the marks and forwards of the jobs it starts together) then go in batches.
                var granted = 0
                if !loop.queueSeemsEmpty {
                    granted = await slots.acquire(atLeast: settings.refill, upTo: settings.takeBatch)
                    if granted == 0 { continue }
                }
                for payload in await take(&loop, slots: granted, on: connection) {
                    handle(payload, in: &group)
                }
            }
            await drain(&group)
        }
        await connection.close()
    }

    /// Once an `orphanCheck` (a lease by default), the jobs in this worker's list that no handler has
    /// are handled; `false` when the list could not be read.
    private func adoptOrphansIfDue(
        _ loop: inout Loop, _ group: inout DiscardingTaskGroup
    ) async -> Bool {
        guard ContinuousClock.now >= loop.nextOrphanCheck else { return true }
        guard let orphans = try? await orphans() else { return false }
        for payload in orphans {
            slots.force()
            handle(payload, in: &group)
        }
        loop.nextOrphanCheck = .now + settings.orphanCheck
        return true
    }

    /// A batch from a long queue (`take_jobs`, up to the `slots` granted; those it does not use go
    /// back), else one job by BLMOVE, which holds no slot while it waits and forces one for the job
    /// it brings; none when Redis failed (after a pause: it may have moved jobs into our list and
    /// lost the reply, so orphans are looked for soon) or the wait ended empty.
    private func take(_ loop: inout Loop, slots granted: Int, on connection: RedisConnection) async -> [String] {
        var held = granted
        defer { slots.release(held) }
        do {
            var taken: [String] = []
            if granted > 0 {
                taken = try await context.store.takeJobs(from: handler.stage, member: context.member, max: granted)
                loop.queueSeemsEmpty = taken.count < granted
                held -= taken.count
            }
            if taken.isEmpty {
                slots.release(held)
                held = 0
                let asked = ContinuousClock.now
                if let payload = try await context.store.take(
                    from: handler.stage, member: context.member, on: connection, block: settings.block)
                {
                    slots.force()
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
    private func drain(_ group: inout DiscardingTaskGroup) async {
        let grace = settings.shutdownGrace
        let finished = self.finished.stream
        let drained = await before(.now + grace) {
            if self.running == 0 { return true }
            for await _ in finished where self.running == 0 { return true }
            return false
        }
        if !drained {
            context.logger.warning(
                "grace period over, abandoning jobs in flight", metadata: ["jobs": "\(running)"])
            group.cancelAll()
        }
    }

    private func handle(_ payload: String, in group: inout DiscardingTaskGroup) {
        let id = handling.withLockedValue { $0.take(payload) }
        group.addTask {
            let started = ContinuousClock.now
            await self.decodeAndHandle(payload)
            PipelineMetrics.jobHandled(stage: self.handler.stage, took: ContinuousClock.now - started)
            self.handling.withLockedValue { $0.letGo(id) }
            self.slots.release()
            self.finished.continuation.yield()
        }
    }

    /// Decodes a job once and gives it to the handler; one it cannot decode, of another stage, or
    /// foreign goes to the dead letters untouched.
    private func decodeAndHandle(_ payload: String) async {
        guard let job = try? Job.decode(payload), handler.accepts(job) else {
            await context.deadLetter(
                payload, ticket: nil, reason: ReasonCode.undecodableJob, error: "not a \(handler.stage.rawValue) job", attempts: 0)
            return
        }
        if isForeign(job) {
            await context.deadLetter(
                payload, ticket: nil, reason: ReasonCode.foreignTicket,
                error: "the job's ticket lies in another bucket: none of this pipeline's", attempts: 0)
            return
        }
        await handler.handle(HeldJob(payload: payload, job: job, worker: context))
    }

    /// With buckets, a job whose ticket lies in another bucket than this worker's is none of this
    /// pipeline's (every job it queues lies with its ticket): its steps would reach into another
    /// slot.
    private func isForeign(_ job: Job) -> Bool {
        let keys = context.store.keys
        return keys.layout.count > 1 && keys.ticketInThisBucket(job.ownTicket) == nil
    }

    /// Jobs in this worker's in-flight list that no handler has: a BLMOVE whose reply was lost,
    /// or a handler that gave up. Nobody else will ever move them while this worker lives.
    private func orphans() async throws -> [String] {
        // Who holds what, read before the list: a handler finishing in between then counts as
        // holding a job the list no longer shows (harmless), never the other way round.
        var held = handling.withLockedValue { $0 }.countsByPayload()
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

import AppleReceipt
import Logging
import NIOConcurrencyHelpers
import RedisClient

/// What a handler needs from the worker running it.
package struct WorkerContext: Sendable {
    package let store: PipelineStore
    /// `<stage>:<worker-id>`: this worker's entry in `iap:workers` and the name of its in-flight list.
    package let member: String
    package let stage: Stage
    package let logger: Logger
    let stopping: NIOLockedValueBox<Bool>
    /// `forward_job` for the jobs this worker finishes at about the same time, in one call.
    let forwards: GroupCommit<PipelineStore.Forward, TransitionResult>
    /// The handler's batchers for this worker (`WorkerBatchers`), by the batchers that made them.
    let batchers = NIOLockedValueBox<[ObjectIdentifier: any Sendable]>([:])

    package init(store: PipelineStore, member: String, stage: Stage, logger: Logger) {
        self.store = store
        self.member = member
        self.stage = stage
        self.logger = logger
        self.stopping = NIOLockedValueBox(false)
        self.forwards = GroupCommit(maxBatch: 64) { jobs in
            try await store.forward(jobs, member: member)
        }
    }

    /// Forwards a job this worker holds (batched with others finishing now): `forward_job`.
    package func forward(_ payload: String, to next: Job, ticketFields: [(String, String)] = []) async throws -> TransitionResult {
        try await forwards.submit(PipelineStore.Forward(payload: payload, next: next, ticketFields: ticketFields))
    }

    package var isStopping: Bool { stopping.withLockedValue { $0 } }

    /// Runs a step (`body`: one call of `script`), retrying with backoff while Redis is unreachable
    /// or not ready (the scripts are safe to repeat: one that ran already finds the job gone and
    /// moves nothing). Gives up when the task is cancelled; the job then stays in flight for the
    /// stop or the reaper to return. `giveUpAfter` bounds the retrying (a stopping worker must not
    /// wait for Redis forever). An error that is not Redis's (a reply the script's header does not
    /// list) is logged and gives `nil`: the job stays in flight, and the reaper returns it.
    package func transition<T: Sendable>(
        _ script: any PipelineScript.Type, giveUpAfter: Duration? = nil, _ body: () async throws -> T
    ) async -> T? {
        await retrying(script.name, giveUpAfter: giveUpAfter, body)
    }

    /// The same for reads a step needs before its script (`find_account`, …).
    package func transition<T: Sendable>(reading what: String, _ body: () async throws -> T) async -> T? {
        await retrying(what, giveUpAfter: nil, body)
    }

    private func retrying<T: Sendable>(_ what: String, giveUpAfter: Duration?, _ body: () async throws -> T) async -> T? {
        var backoff = RedisRetryBackoff()
        let deadline = giveUpAfter.map { ContinuousClock.now + $0 }
        while !Task.isCancelled && deadline.map({ ContinuousClock.now < $0 }) ?? true {
            do {
                return try await body()
            } catch let error as RedisError where error.isTransient {
                PipelineMetrics.redisError(stage: stage)
                logger.warning("redis unavailable during \(what), retrying", metadata: ["error": "\(error)"])
            } catch {
                logger.error("\(what) failed", metadata: ["error": "\(error)"])
                return nil
            }
            await backoff.pause()
        }
        return nil
    }

    /// Dead-letters a job this worker holds.
    package func deadLetter(
        _ payload: String, ticket: String?, reason: String, error: String, attempts: Int
    ) async {
        logger.error("dead-lettering job", metadata: ["ticket": "\(ticket ?? "-")", "reason": "\(reason)", "error": "\(error)"])
        PipelineMetrics.deadLettered(stage: stage, reason: reason)
        _ = await transition(DeadLetterJob.self) {
            try await store.deadLetter(
                payload, member: member, stage: stage, ticket: ticket, reason: reason, error: error, attempts: attempts)
        }
    }

    /// Handles what every transition can report besides success.
    package func settle(_ result: TransitionResult?, payload: String, job: Job, by script: any PipelineScript.Type) async {
        let what = script.name
        switch result {
        case .moved:
            PipelineMetrics.moved(stage: stage, by: what)
        case nil:
            return
        case .leaseLost:
            logger.warning("lost the lease on a job: another worker has it now", metadata: ["ticket": "\(job.ticket)", "step": "\(what)"])
        case .ticketMissing:
            await deadLetter(payload, ticket: job.ownTicket, reason: ReasonCode.ticketMissing, error: "the ticket hash expired or was deleted", attempts: job.attempts)
        }
    }
}

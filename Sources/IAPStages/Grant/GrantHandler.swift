import AppleReceipt
import PipelineCore

/// Grant stage: records each new grant, publishes it on the fulfilment stream and sets the
/// ticket's final status, all in one script per job. One part of a receipt whose purchases lie in
/// several buckets is granted on its bucket, then reports to its client's ticket (`finish_part`),
/// then is acked (`acknowledge_job`): a crash between them redoes the grant, which grants nothing
/// twice, and reports the same outcome again.
package struct GrantHandler: JobHandler {
    package let stage = Stage.grant
    package let transitions: [any PipelineScript.Type] = [GrantPurchases.self, FinishPart.self, AcknowledgeJob.self]
    /// Set App Account Token (`IAP_SET_APP_ACCOUNT_TOKENS` with Server API keys): a purchase
    /// granted without an app account token to a user who has one bound queues the errand that
    /// sets it at Apple (the notify stage makes the call), its ticket living this long; `nil`: off.
    package let tokenTickets: Duration?
    /// Finish Transaction (`IAP_FINISH_TRANSACTIONS` with Server API keys): a consumable granted
    /// queues the errand that finishes it at Apple (the notify stage makes the call), its ticket
    /// living this long; `nil`: off.
    package let finishTickets: Duration?
    /// Trims each bucket's fulfilment stream and dead letters to their bounds; `nil`: kept as they are.
    package let retention: RetentionSweep?
    /// `grant_purchases` for a worker's jobs reaching their step at about the same time, in one call.
    private let steps = WorkerBatchers<GrantPurchases, GrantPurchases.Reply> { worker in
        GroupCommit(maxBatch: 32) { steps in try await worker.store.runBatch(steps, replicated: true) }
    }
    /// The users' bound tokens (Set App Account Token on) for a worker's jobs reading them at about
    /// the same time, in one round trip: it was one a receipt.
    private let tokens = WorkerBatchers<String, String?> { worker in
        GroupCommit(maxBatch: 32) { users in try await worker.store.accountTokens(ofUsers: users) }
    }

    package init(tokenTickets: Duration? = nil, finishTickets: Duration? = nil, retention: RetentionSweep? = nil) {
        self.tokenTickets = tokenTickets
        self.finishTickets = finishTickets
        self.retention = retention
    }

    /// Every grant process keeps the buckets bounded (once a minute each), and ends the bucket's
    /// grants for a time whose end has come (each once, whichever granter finds it first).
    package func housekeeping(_ worker: WorkerContext) async throws {
        try await retention?.runIfDue(worker)
        let ended = try await worker.store.endDueTimedGrants()
        if ended > 0 { worker.logger.info("grants for a time ended", metadata: ["count": "\(ended)"]) }
    }

    package func accepts(_ job: Job) -> Bool { job.stage == .grant && job.claimed != nil }

    package func handle(_ held: HeldJob) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        let (steps, tokens) = (self.steps, self.tokens)
        let outcome = await worker.transition(GrantPurchases.self) {
            try await worker.store.grantOutcome(
                payload, member: worker.member, job: job, tokenTickets: tokenTickets, finishTickets: finishTickets,
                batching: { step in try await steps.submit(step, by: worker) },
                readingToken: { user in try await tokens.submit(user, by: worker) })
        }
        guard let (result, granted) = outcome else { return }
        guard result == .moved, let granted else {
            await held.settle(result, by: GrantPurchases.self)
            return
        }
        SalesMetrics.count(granted, purchases: job.grantWork.purchases)
        guard let part = job.part else {
            worker.logger.info("ticket finished", metadata: ["ticket": "\(job.ticket)", "status": "\(granted.status.rawValue)"])
            await held.settle(result, by: GrantPurchases.self)
            return
        }
        await report(part, granted, held: held)
    }

    /// A part's outcome onto its client's ticket, then the part's job acked.
    private func report(_ part: String, _ granted: GrantOutcome, held: HeldJob) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        let outcome = PartOutcome(
            status: granted.status, transactions: granted.transactions, reason: granted.reason, environment: job.grantWork.environment)
        guard let recorded = await worker.transition(FinishPart.self, {
            try await worker.store.finishPart(ticket: job.ticket, part: part, outcome: outcome)
        }) else { return }
        if recorded {
            worker.logger.info("part finished", metadata: [
                "ticket": "\(job.ticket)", "part": "\(part)", "status": "\(granted.status.rawValue)",
            ])
        } else {
            // The client's ticket expired: its grants stand and reach the backend on the stream.
            worker.logger.warning("a part's ticket is gone; its outcome is on the part alone", metadata: [
                "ticket": "\(job.ticket)", "part": "\(part)",
            ])
        }
        await held.move(by: AcknowledgeJob.self) {
            try await worker.store.acknowledge(payload, member: worker.member, ownTicket: part)
        }
    }
}

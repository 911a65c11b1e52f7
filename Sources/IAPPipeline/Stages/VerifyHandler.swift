import AppleReceipt
import Logging

/// Verify stage: asks Apple, checks the receipt belongs to our app, and moves the job on to
/// dedupe, a rejection, a retry, or the dead letters.
public struct VerifyHandler: JobHandler {
    public let stage = Stage.verify
    public let verifier: any ReceiptVerifying
    public let bundleIDs: Set<String>
    public let retryPolicy: RetryPolicy

    public init(verifier: any ReceiptVerifying, bundleIDs: Set<String>, retryPolicy: RetryPolicy) {
        self.verifier = verifier
        self.bundleIDs = bundleIDs
        self.retryPolicy = retryPolicy
    }

    public func handle(_ payload: String, worker: WorkerContext) async {
        guard let job = try? Job.decode(payload), job.stage == .verify, let receiptData = job.receiptData else {
            await worker.deadLetter(payload, ticket: nil, reason: "undecodable_job", error: "not a verify job", attempts: 0)
            return
        }
        guard let exists = await worker.transition("mark_verifying", { try await worker.store.markVerifying(ticket: job.ticket) }) else {
            return
        }
        if !exists {
            await worker.settle(.ticketMissing, payload: payload, job: job, what: "mark_verifying")
            return
        }
        let attempt = job.attempts + 1
        let outcome = await verifier.verify(receiptData: receiptData, attempt: attempt)
        if Task.isCancelled { return }
        switch outcome {
        case .valid(let receipt):
            await accept(receipt, payload: payload, job: job, attempt: attempt, worker: worker)
        case .rejected(let reason):
            await reject(payload, job: job, reason: reason, attempt: attempt, environment: nil, worker: worker)
        case .misconfigured(let reason, let detail):
            worker.logger.critical("Apple says our configuration is wrong; the job goes to the dead letters", metadata: [
                "reason": "\(reason)", "detail": "\(detail)",
            ])
            await worker.deadLetter(payload, ticket: job.ticket, reason: reason, error: detail, attempts: attempt)
        case .transient(let reason, let detail, let retryAfterMs):
            if attempt >= retryPolicy.maxAttempts {
                await worker.deadLetter(
                    payload, ticket: job.ticket, reason: "retries_exhausted", error: "\(reason): \(detail)", attempts: attempt)
                return
            }
            var next = job
            next.attempts = attempt
            let delay = retryPolicy.delayMs(afterAttempt: attempt, retryAfterMs: retryAfterMs)
            let result = await worker.transition("schedule_retry") {
                try await worker.store.scheduleRetry(
                    payload, member: worker.member, next: next, dueMs: currentTimeMs() + Int64(delay),
                    lastError: "\(reason): \(detail)")
            }
            await worker.settle(result, payload: payload, job: job, what: "schedule_retry")
        }
    }

    private func accept(_ receipt: VerifiedReceipt, payload: String, job: Job, attempt: Int, worker: WorkerContext) async {
        guard bundleIDs.contains(receipt.bundleID) else {
            await reject(payload, job: job, reason: "bundle_mismatch", attempt: attempt, environment: receipt.environment, worker: worker)
            return
        }
        guard !receipt.transactions.isEmpty else {
            await reject(payload, job: job, reason: "no_purchases", attempt: attempt, environment: receipt.environment, worker: worker)
            return
        }
        var next = job
        next.stage = .dedupe
        next.attempts = attempt
        next.receipt = receipt
        next.receiptData = nil
        let result = await worker.transition("forward_job") {
            try await worker.store.forward(
                payload, member: worker.member, to: next,
                ticketFields: [("environment", receipt.environment), ("attempts", String(attempt))])
        }
        await worker.settle(result, payload: payload, job: job, what: "forward_job")
    }

    private func reject(
        _ payload: String, job: Job, reason: String, attempt: Int, environment: String?, worker: WorkerContext
    ) async {
        let result = await worker.transition("finish_ticket") {
            try await worker.store.finish(
                payload, member: worker.member, ticket: job.ticket, status: .rejected, reason: reason, attempts: attempt,
                environment: environment)
        }
        await worker.settle(result, payload: payload, job: job, what: "finish_ticket")
    }
}

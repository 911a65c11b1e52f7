import AppleReceipt
import Foundation
import PipelineCore

/// Webhook stage: delivers one user's fulfilment events to the game backend, oldest first, one
/// at a time (a user has one delivery job, so a `revoked` never overtakes its `granted`). A 2xx
/// moves the job on to the user's next event (at the back of the queue: others' turns first); a
/// failure parks the job in the retry set with backoff and jitter, so one slow user holds up
/// nobody else; an event still undelivered `maxAge` after it was added goes to the dead letters
/// (replayable with `iapctl dead replay`), and the user's next event follows.
package struct WebhookHandler: JobHandler {
    package let stage = Stage.webhook
    package let poster: any WebhookPosting
    package let signer: WebhookSigner
    package let maxAge: Duration
    /// Backoff between attempts (its `maxAttempts` bounds only replays: the age bounds the rest).
    package let retryPolicy: RetryPolicy

    package static let expiredReason = "webhook_expired"
    package static let failedReason = "webhook_failed"

    package let transitions: [any PipelineScript.Type] = [FinishWebhookEvent.self, ScheduleRetry.self]

    package init(poster: any WebhookPosting, signer: WebhookSigner, maxAge: Duration, retryPolicy: RetryPolicy) {
        self.poster = poster
        self.signer = signer
        self.maxAge = maxAge
        self.retryPolicy = retryPolicy
    }

    /// New fulfilment entries go to their users' delivery lists (`route_fulfilment_events`), 500
    /// at a time until none is left.
    package func housekeeping(_ worker: WorkerContext) async throws {
        while try await worker.store.routeFulfilmentEvents(consumer: worker.member, count: Self.routeBatch) == Self.routeBatch {}
    }

    static let routeBatch = 500

    package func handle(_ held: HeldJob) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        let text: String?
        let replayed = job.replayedWebhookEvent
        if let replay = replayed {
            text = replay
        } else {
            guard let head = await worker.transition(reading: "next_webhook_event", { try await worker.store.nextWebhookEvent(user: job.userID) })
            else { return }
            text = head
        }
        guard let text else {
            // Nothing left (an earlier run delivered it): the user's job ends.
            await finish(held, eventID: "")
            return
        }
        guard let event = WebhookEvent(listEntry: text) else {
            await worker.deadLetter(payload, ticket: job.ticket, reason: ReasonCode.undecodableJob, error: "not a webhook event", attempts: job.attempts)
            return
        }
        let now = currentTimeMs()
        if replayed == nil, now - event.createdAtMs > maxAge.milliseconds {
            PipelineMetrics.webhookDelivery("expired", took: .zero)
            worker.logger.error("a webhook event expired undelivered: dead-lettered", metadata: [
                "event_id": "\(event.id)", "user": "\(job.userID)", "attempts": "\(job.attempts)",
            ])
            let replay = Job(
                ticket: worker.store.keys.webhookEventTicket(eventID: event.id), stage: .webhook, userID: job.userID,
                work: .delivery(event: event.listEntry), enqueuedAt: now)
            let dead = DeadLetter(
                job: replay.encoded(), stage: Stage.webhook.rawValue, reason: Self.expiredReason,
                error: "undelivered for \(maxAge) after \(job.attempts) attempts", attempts: job.attempts, at: now, ticket: replay.ticket)
            await finish(held, eventID: event.id, deadEntry: dead.encoded())
            return
        }
        let body = event.body
        let started = ContinuousClock.now
        let result = await poster.post(body, headers: [
            ("X-IAP-Event-Id", event.id), ("X-IAP-Signature", signer.signature(body: body, timestamp: now / 1000)),
        ])
        switch result {
        case .delivered:
            PipelineMetrics.webhookDelivery("delivered", took: ContinuousClock.now - started)
            await finish(held, eventID: event.id)
        case .failed(let detail):
            PipelineMetrics.webhookDelivery("failed", took: ContinuousClock.now - started)
            worker.logger.warning("webhook delivery failed, retrying", metadata: [
                "event_id": "\(event.id)", "user": "\(job.userID)", "attempt": "\(job.attempts + 1)", "cause": "\(detail)",
            ])
            var policy = retryPolicy
            if job.replayedWebhookEvent == nil { policy.maxAttempts = .max }
            await held.retry(
                attempt: job.attempts + 1, reason: Self.failedReason, detail: detail, retryAfterMs: nil, policy: policy)
        }
    }

    private func finish(_ held: HeldJob, eventID: String, deadEntry: String? = nil) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        await held.move(by: FinishWebhookEvent.self) {
            try await worker.store.finishWebhookEvent(payload, member: worker.member, job: job, eventID: eventID, deadEntry: deadEntry)
        }
    }
}

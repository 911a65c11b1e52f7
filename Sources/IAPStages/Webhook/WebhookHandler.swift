import AppleReceipt
import Foundation
import PipelineCore

/// Webhook stage: delivers one user's fulfilment events to a destination (the game backend, an
/// analytics tool…), oldest first, one at a time (a user has one delivery job per destination, so
/// a `revoked` never overtakes its `granted`). A 2xx moves the job on to the user's next event (at
/// the back of the queue: others' turns first); a failure parks the job in the retry set with
/// backoff and jitter, so one slow user holds up nobody else; an event still undelivered `maxAge`
/// after it was added goes to the dead letters (replayable with `iapctl dead replay`), and the
/// user's next event follows. Each destination has its own consumer group, lists and jobs, and
/// at most its share of the worker's slots (`DestinationGate`): one slow destination never holds
/// another.
package struct WebhookHandler: JobHandler {
    /// A destination and the client that POSTs to it.
    package struct Target: Sendable {
        package var destination: WebhookDestination
        package var poster: any WebhookPosting

        package init(_ destination: WebhookDestination, poster: any WebhookPosting) {
            self.destination = destination
            self.poster = poster
        }
    }

    package let stage = Stage.webhook
    /// By destination name; `ordered` in the settings' order (routed in turn).
    package let targets: [String: Target]
    private let ordered: [Target]
    private let signers: [String: WebhookSigner]
    private let gate: DestinationGate
    package let maxAge: Duration
    /// Backoff between attempts (its `maxAttempts` bounds only replays: the age bounds the rest).
    package let retryPolicy: RetryPolicy

    package static let expiredReason = "webhook_expired"
    package static let failedReason = "webhook_failed"
    /// A job waiting for its destination's share of the slots, or for a worker that knows its destination.
    package static let waitingReason = "webhook_waiting"

    package let transitions: [any PipelineScript.Type] = [FinishWebhookEvent.self, ScheduleRetry.self]

    /// Each POST's bound (`IAP_WEBHOOK_TIMEOUT_MS`): the longest a job turned away by the gate waits.
    private let timeout: Duration

    /// `slots`: the worker's concurrency, shared among the destinations.
    package init(targets: [Target], slots: Int, maxAge: Duration, timeout: Duration, retryPolicy: RetryPolicy) {
        self.timeout = timeout
        self.targets = Dictionary(uniqueKeysWithValues: targets.map { ($0.destination.name, $0) })
        ordered = targets
        signers = self.targets.mapValues(\.destination.signer)
        gate = DestinationGate(shares: WebhookDestination.shares(of: targets.map(\.destination), slots: slots))
        self.maxAge = maxAge
        self.retryPolicy = retryPolicy
    }

    /// New fulfilment entries go to their users' delivery lists (`route_fulfilment_events`), for
    /// each destination through its own consumer group and filter, 500 at a time until none is left.
    package func housekeeping(_ worker: WorkerContext) async throws {
        for destination in ordered.map(\.destination) {
            while try await worker.store.routeFulfilmentEvents(
                to: destination.name, filter: destination.filter, consumer: worker.member, count: Self.routeBatch) == Self.routeBatch {}
        }
    }

    static let routeBatch = 500

    package func handle(_ held: HeldJob) async {
        let name = held.job.webhookDestination
        guard let target = targets[name], let signer = signers[name] else {
            await unknown(name, held)
            return
        }
        guard gate.enter(name) else {
            await wait(held, after: gate.wait(for: name, longest: timeout), detail: "\(name) has its share of the slots in use")
            return
        }
        let started = ContinuousClock.now
        await deliver(held, to: target, signer: signer)
        gate.leave(name, took: ContinuousClock.now - started)
    }

    /// A job to a destination this worker's file does not name: while the destination is still
    /// known in Redis (`webhook:destinations`: a rolling change of `IAP_WEBHOOKS_FILE`) it waits for
    /// a worker that knows it; once it was removed there (docs/webhooks.md), the job ends.
    private func unknown(_ name: String, _ held: HeldJob) async {
        let worker = held.worker
        guard let known = await worker.transition(reading: "webhook_destinations", {
            try await worker.store.redis.send("SISMEMBER", worker.store.keys.webhookDestinations, name).int == 1
        }) else { return }
        if known {
            worker.logger.warning("a delivery job to a destination this worker does not know: it waits", metadata: [
                "destination": "\(name)", "user": "\(held.job.userID)",
            ])
            await wait(held, after: .seconds(30), detail: "no destination \(name) in this worker's IAP_WEBHOOKS_FILE")
        } else {
            worker.logger.info("a delivery job to a removed destination ends", metadata: ["destination": "\(name)", "user": "\(held.job.userID)"])
            await finish(held, eventID: "")
        }
    }

    private func wait(_ held: HeldJob, after: Duration, detail: String) async {
        await held.retry(
            attempt: held.job.attempts, reason: Self.waitingReason, detail: detail, retryAfterMs: nil, policy: retryPolicy,
            spends: false, after: after)
    }

    private func deliver(_ held: HeldJob, to target: Target, signer: WebhookSigner) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        let text: String?
        let replayed = job.replayedWebhookEvent
        if let replay = replayed {
            text = replay
        } else {
            guard let head = await worker.transition(reading: "next_webhook_event", {
                try await worker.store.nextWebhookEvent(user: job.userID, to: target.destination.name)
            })
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
            PipelineMetrics.webhookDelivery("expired", to: target.destination.name, took: .zero)
            worker.logger.error("a webhook event expired undelivered: dead-lettered", metadata: [
                "event_id": "\(event.id)", "user": "\(job.userID)", "attempts": "\(job.attempts)", "destination": "\(target.destination.name)",
            ])
            let name = target.destination.name
            let replay = Job(
                ticket: worker.store.keys.webhookEventTicket(eventID: event.id, to: name), stage: .webhook, userID: job.userID,
                work: .delivery(event: event.listEntry, destination: name == RedisKeys.defaultWebhookDestination ? nil : name),
                enqueuedAt: now)
            let dead = DeadLetter(
                job: replay.encoded(), stage: Stage.webhook.rawValue, reason: Self.expiredReason,
                error: "undelivered for \(maxAge) after \(job.attempts) attempts", attempts: job.attempts, at: now, ticket: replay.ticket)
            await finish(held, eventID: event.id, deadEntry: dead.encoded())
            return
        }
        let body = event.body
        let started = ContinuousClock.now
        let result = await target.poster.post(body, headers: [
            ("X-IAP-Event-Id", event.id), ("X-IAP-Signature", signer.signature(body: body, timestamp: now / 1000)),
        ])
        switch result {
        case .delivered:
            PipelineMetrics.webhookDelivery("delivered", to: target.destination.name, took: ContinuousClock.now - started)
            await finish(held, eventID: event.id)
        case .failed(let detail):
            PipelineMetrics.webhookDelivery("failed", to: target.destination.name, took: ContinuousClock.now - started)
            worker.logger.warning("webhook delivery failed, retrying", metadata: [
                "event_id": "\(event.id)", "user": "\(job.userID)", "attempt": "\(job.attempts + 1)", "cause": "\(detail)",
                "destination": "\(target.destination.name)",
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

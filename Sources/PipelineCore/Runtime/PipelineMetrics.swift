import AppleReceipt
import IAPMetrics
import Metrics

/// Every metric the stages record, named in one place (swift-metrics; the executables export
/// them as Prometheus). Labels are bounded: stages, script names, reason codes, never a ticket or
/// a user.
package enum PipelineMetrics {
    /// Every series a worker of `stage` reports, at 0 from its start (Prometheus: avoid missing
    /// metrics, so `rate()` and alerts work on a quiet stage): its jobs by the scripts that move
    /// them (`transitions`), their duration, Redis errors, the common dead-letter reasons, the reaper.
    package static func prepare(stage: Stage, transitions: [any PipelineScript.Type]) {
        let label = ("stage", stage.rawValue)
        for script in transitions { _ = Counter(label: "iap_jobs_total", dimensions: [label, ("outcome", script.name)]) }
        _ = Timer(label: "iap_job_duration_seconds", dimensions: [label])
        _ = Counter(label: "iap_redis_errors_total", dimensions: [label])
        for reason in [ReasonCode.ticketMissing, ReasonCode.undecodableJob, ReasonCode.retriesExhausted] {
            _ = Counter(label: "iap_dead_letters_total", dimensions: [label, ("reason", reason)])
        }
        for what in ["workers", "returned", "dead_lettered"] { _ = Counter(label: "iap_reaped_total", dimensions: [("what", what)]) }
    }

    /// `iap_jobs_total{stage, outcome}`: jobs a stage moved on, by the script that moved them
    /// (`forward_job`, `claim_purchases`, `grant_purchases`, `finish_ticket`, `schedule_retry`, …).
    package static func moved(stage: Stage, by script: String) {
        jobs[StageOutcome(stage: stage, outcome: script)].increment()
    }

    /// `iap_job_duration_seconds{stage}`: from a job's taking to its handler's end.
    package static func jobHandled(stage: Stage, took: Duration) {
        durations[stage].record(duration: took)
    }

    private struct StageOutcome: Hashable, Sendable {
        let stage: Stage
        let outcome: String
    }

    // The two a job records, made once (`MetricHandles`).
    private static let jobs = MetricHandles<StageOutcome, Counter> { key in
        Counter(label: "iap_jobs_total", dimensions: [("stage", key.stage.rawValue), ("outcome", key.outcome)])
    }
    private static let durations = MetricHandles<Stage, Timer> { stage in
        Timer(label: "iap_job_duration_seconds", dimensions: [("stage", stage.rawValue)])
    }

    /// `iap_dead_letters_total{stage, reason}`.
    package static func deadLettered(stage: Stage, reason: String) {
        Counter(label: "iap_dead_letters_total", dimensions: [("stage", stage.rawValue), ("reason", reason)]).increment()
    }

    /// `iap_retries_total{stage, reason}`: a job parked for its next attempt (Apple's transient failures, rate limits).
    package static func retried(stage: Stage, reason: String) {
        Counter(label: "iap_retries_total", dimensions: [("stage", stage.rawValue), ("reason", reason)]).increment()
    }

    /// `iap_redis_errors_total{stage}`: a transition Redis could not take (it is retried).
    package static func redisError(stage: Stage) {
        Counter(label: "iap_redis_errors_total", dimensions: [("stage", stage.rawValue)]).increment()
    }

    /// `iap_reaped_total{what}`: `workers` reaped, jobs `returned` to their queue, `dead_lettered` poison.
    package static func reaped(workers: Int, returned: Int, deadLettered: Int) {
        if workers > 0 { Counter(label: "iap_reaped_total", dimensions: [("what", "workers")]).increment(by: workers) }
        if returned > 0 { Counter(label: "iap_reaped_total", dimensions: [("what", "returned")]).increment(by: returned) }
        if deadLettered > 0 { Counter(label: "iap_reaped_total", dimensions: [("what", "dead_lettered")]).increment(by: deadLettered) }
    }

    /// `iap_notification_sweeps_total{result}` (`complete`, `incomplete`: Apple or Redis stopped it)
    /// and `iap_notifications_recovered_total`: notifications the sweep found in Apple's history
    /// that had never arrived, now stored.
    package static func notificationSweep(complete: Bool, recovered: Int) {
        Counter(label: "iap_notification_sweeps_total", dimensions: [("result", complete ? "complete" : "incomplete")]).increment()
        Counter(label: "iap_notifications_recovered_total").increment(by: recovered)
    }

    /// `iap_webhook_deliveries_total{result,destination}` (`delivered`, `failed`, `expired`) and
    /// `iap_webhook_delivery_seconds{result,destination}`: each POST to a webhook destination.
    package static func webhookDelivery(_ result: String, to destination: String, took: Duration) {
        let dimensions = [("result", result), ("destination", destination)]
        Counter(label: "iap_webhook_deliveries_total", dimensions: dimensions).increment()
        if result != "expired" {
            Timer(label: "iap_webhook_delivery_seconds", dimensions: dimensions).record(duration: took)
        }
    }

    /// `iap_rechecks_queued_total`: subscriptions whose re-check came due and went to the verify queue.
    package static func rechecksQueued(_ count: Int) {
        if count > 0 { Counter(label: "iap_rechecks_queued_total").increment(by: count) }
    }

    /// The queues as the intake samples them: `iap_queue_depth{queue}`, `iap_queue_oldest_age_seconds{queue}`
    /// (0 when empty), `iap_retry_scheduled`, `iap_dead_letters`, `iap_held_purchases`.
    package static func sampled(_ sample: QueueSample) {
        for (queue, depth) in sample.depths {
            Gauge(label: "iap_queue_depth", dimensions: [("queue", queue)]).record(depth)
            Gauge(label: "iap_queue_oldest_age_seconds", dimensions: [("queue", queue)])
                .record(Double(sample.oldestAgeMs[queue] ?? 0) / 1000)
        }
        Gauge(label: "iap_retry_scheduled").record(sample.retry)
        Gauge(label: "iap_dead_letters").record(sample.dead)
        Gauge(label: "iap_held_purchases").record(sample.held)
    }
}

import AppleReceipt
import AppStoreServerAPI
import PipelineCore

extension HeldJob {
    /// After a transient failure of Apple: parks the job in the retry set until its next attempt
    /// is due, or dead-letters it (`retries_exhausted`) once `policy` has no attempt left. Waiting
    /// for the fleet's Server API budget, or for Apple's Retry-After after a 429, is not a failed
    /// attempt: the job comes back exactly when a call may be made.
    ///
    /// `spends: false` (the fleet's Apple breaker says Apple fails for everyone) keeps the job's
    /// attempts and never dead-letters it; `after` sets the wait (the breaker's next probe);
    /// `appleFailedAt` (Redis's ms) is carried on the job to its next Apple-side failure.
    package func retry(
        attempt: Int, reason: String, detail: String, retryAfterMs: Int?, policy: RetryPolicy,
        spends: Bool = true, after: Duration? = nil, appleFailedAt: Int64? = nil
    ) async {
        let rateLimited = reason == ServerAPIClient.rateLimitedReason && retryAfterMs != nil
        let spends = spends && !rateLimited
        if spends && attempt >= policy.maxAttempts {
            await deadLetter(reason: ReasonCode.retriesExhausted, error: "\(reason): \(detail)", attempts: attempt)
            return
        }
        PipelineMetrics.retried(stage: worker.stage, reason: reason)
        var next = job
        next.attempts = spends ? attempt : job.attempts
        if let appleFailedAt { next.appleFailedAt = appleFailedAt }
        let retryAfter = retryAfterMs.map { Duration.milliseconds($0) }
        let delay = rateLimited ? retryAfter! : after ?? policy.delay(afterAttempt: attempt, retryAfter: retryAfter)
        await move(by: ScheduleRetry.self) {
            try await worker.store.scheduleRetry(
                payload, member: worker.member, next: next, delay: delay, lastError: "\(reason): \(detail)")
        }
    }
}

import AppStoreServerAPI
import AppleReceipt

extension WorkerContext {
    /// After a transient failure of Apple: parks the job in the retry set until its next attempt
    /// is due, or dead-letters it (`retries_exhausted`) once `policy` has no attempt left. Waiting
    /// for the fleet's Server API budget, or for Apple's Retry-After after a 429, is not a failed
    /// attempt: the job comes back exactly when a call may be made.
    public func retry(
        _ payload: String, job: Job, attempt: Int, reason: String, detail: String, retryAfterMs: Int?, policy: RetryPolicy
    ) async {
        let rateLimited = reason == ServerAPIClient.rateLimitedReason && retryAfterMs != nil
        if !rateLimited && attempt >= policy.maxAttempts {
            await deadLetter(payload, ticket: job.ownTicket, reason: ReasonCode.retriesExhausted, error: "\(reason): \(detail)", attempts: attempt)
            return
        }
        PipelineMetrics.retried(stage: stage, reason: reason)
        var next = job
        next.attempts = rateLimited ? job.attempts : attempt
        let retryAfter = retryAfterMs.map { Duration.milliseconds($0) }
        let delay = rateLimited ? retryAfter! : policy.delay(afterAttempt: attempt, retryAfter: retryAfter)
        let result = await transition(ScheduleRetry.self) {
            try await store.scheduleRetry(
                payload, member: member, next: next, delay: delay, lastError: "\(reason): \(detail)")
        }
        await settle(result, payload: payload, job: job, by: ScheduleRetry.self)
    }
}

/// Exponential backoff with full jitter, honouring Apple's Retry-After.
public struct RetryPolicy: Sendable, Equatable {
    public var baseMs: Int
    public var maxMs: Int
    public var maxAttempts: Int

    public init(baseMs: Int = 1000, maxMs: Int = 600_000, maxAttempts: Int = 12) {
        self.baseMs = baseMs
        self.maxMs = maxMs
        self.maxAttempts = maxAttempts
    }

    /// The wait after failed attempt number `attempt` (from 1): random in 0...min(max, base·2^(attempt-1)),
    /// never shorter than Retry-After, never longer than `maxMs`.
    public func delayMs<R: RandomNumberGenerator>(afterAttempt attempt: Int, retryAfterMs: Int?, using random: inout R) -> Int {
        let exponent = min(max(attempt - 1, 0), 40)
        let ceiling = min(maxMs, baseMs.multipliedReportingOverflow(by: 1 << exponent).overflow ? maxMs : baseMs << exponent)
        let jittered = Int.random(in: 0...max(ceiling, 0), using: &random)
        return min(max(jittered, retryAfterMs ?? 0), maxMs)
    }

    public func delayMs(afterAttempt attempt: Int, retryAfterMs: Int?) -> Int {
        var random = SystemRandomNumberGenerator()
        return delayMs(afterAttempt: attempt, retryAfterMs: retryAfterMs, using: &random)
    }
}

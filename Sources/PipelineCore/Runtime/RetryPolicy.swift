import IAPSettings

/// Exponential backoff with full jitter, honouring Apple's Retry-After (`IAP_RETRY_BASE_MS`,
/// `IAP_RETRY_MAX_MS`, `IAP_MAX_ATTEMPTS`).
package struct RetryPolicy: Sendable, Equatable {
    package var base: Duration
    package var max: Duration
    package var maxAttempts: Int

    package init(base: Duration, max: Duration, maxAttempts: Int) {
        self.base = base
        self.max = max
        self.maxAttempts = maxAttempts
    }

    /// Its own settings: `IAP_RETRY_BASE_MS`, `IAP_RETRY_MAX_MS` (at least the base), `IAP_MAX_ATTEMPTS`.
    package init(reading source: SettingSource) throws(ConfigurationError) {
        let base = try source.duration(Settings.retryBase)
        let max = try source.duration(Settings.retryMax)
        guard max >= base else {
            throw ConfigurationError(
                Settings.retryMax.variable, "must be at least \(Settings.retryBase.variable) (\(base.milliseconds))")
        }
        self.init(base: base, max: max, maxAttempts: try source.count(Settings.maxAttempts))
    }

    /// The wait after failed attempt number `attempt` (from 1): random in 0...min(max, base·2^(attempt-1))
    /// in whole milliseconds, never shorter than Retry-After, never longer than `max`.
    package func delay<R: RandomNumberGenerator>(afterAttempt attempt: Int, retryAfter: Duration?, using random: inout R) -> Duration {
        let (baseMs, maxMs) = (base.milliseconds, max.milliseconds)
        let exponent = Swift.min(Swift.max(attempt - 1, 0), 40)
        let scaled = baseMs.multipliedReportingOverflow(by: 1 << exponent)
        let ceiling = Swift.min(maxMs, scaled.overflow ? maxMs : scaled.partialValue)
        let jittered = Int64.random(in: 0...Swift.max(ceiling, 0), using: &random)
        return .milliseconds(Swift.min(Swift.max(jittered, retryAfter?.milliseconds ?? 0), maxMs))
    }

    package func delay(afterAttempt attempt: Int, retryAfter: Duration?) -> Duration {
        var random = SystemRandomNumberGenerator()
        return delay(afterAttempt: attempt, retryAfter: retryAfter, using: &random)
    }
}

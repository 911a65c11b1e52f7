import IAPSettings

/// When the fleet's Apple breaker opens and how it probes (`IAP_APPLE_BREAKER_FAILURES`,
/// `IAP_APPLE_BREAKER_PROBE_MS`).
package struct AppleBreakerSettings: Sendable, Equatable {
    /// Apple-side failures with no answer in between, fleet-wide, that open it.
    package var minFailures: Int
    /// How long Apple must have answered nobody before failures open it: two of the rounds in
    /// which the processes tell their answers, so a busy fleet's answers are always counted.
    package var quiet: Duration
    /// While open: one job of the fleet asks Apple this often.
    package var probe: Duration

    package init(minFailures: Int = 5, quiet: Duration = .seconds(2), probe: Duration = .seconds(5)) {
        self.minFailures = minFailures
        self.quiet = quiet
        self.probe = probe
    }

    /// Its own settings (`IAP_APPLE_BREAKER_FAILURES`, `IAP_APPLE_BREAKER_PROBE_MS`); `nil`: no
    /// breaker (`IAP_APPLE_BREAKER_FAILURES=0`).
    package static func reading(_ source: SettingSource) throws(ConfigurationError) -> AppleBreakerSettings? {
        let failures = try source.count(Settings.appleBreakerFailures)
        let probe = try source.duration(Settings.appleBreakerProbe)
        return failures == 0 ? nil : AppleBreakerSettings(minFailures: failures, probe: probe)
    }
}

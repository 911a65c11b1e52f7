import IAPSettings

/// How long what nobody needs any more is kept (`IAP_FULFILMENT_RETENTION_S`, `IAP_DEAD_MAX`,
/// `IAP_DEAD_MAX_AGE_S`): the grant stage's workers trim each bucket once a minute.
package struct RetentionSettings: Sendable, Equatable {
    /// Fulfilment entries older than this go, unless a consumer group or the refund sweep has not had them.
    package var fulfilment: Duration
    /// The newest this many dead letters stay, none older than `deadMaxAge`.
    package var deadMax: Int
    package var deadMaxAge: Duration
    /// How often each bucket is trimmed (once a minute; a quarter of a retention compressed
    /// below four minutes, as the soak does), and how much a call may trim at most.
    package var every: Duration { min(.seconds(60), fulfilment / 4) }
    package var streamBatch = 10_000
    package var deadBatch = 500

    package init(fulfilment: Duration, deadMax: Int, deadMaxAge: Duration) {
        self.fulfilment = fulfilment
        self.deadMax = deadMax
        self.deadMaxAge = deadMaxAge
    }

    /// Its own settings: `IAP_FULFILMENT_RETENTION_S`, `IAP_DEAD_MAX`, `IAP_DEAD_MAX_AGE_S`.
    package init(reading source: SettingSource) throws(ConfigurationError) {
        self.init(
            fulfilment: try source.duration(Settings.fulfilmentRetention), deadMax: try source.count(Settings.deadMax),
            deadMaxAge: try source.duration(Settings.deadMaxAge))
    }
}

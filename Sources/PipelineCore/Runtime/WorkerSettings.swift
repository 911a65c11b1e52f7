import IAPSettings

/// How a stage worker runs.
package struct WorkerSettings: Sendable {
    /// Jobs handled at once by this process.
    package var concurrency: Int
    /// A worker silent for longer than this loses its jobs to the reaper (`IAP_LEASE_MS`).
    package var lease: Duration
    package var maxRedeliveries: Int
    /// How long jobs in flight may finish after a stop (`IAP_SHUTDOWN_GRACE_MS`).
    package var shutdownGrace: Duration
    /// How long one BLMOVE waits; bounds how fast an idle worker notices a stop.
    package var block: Duration
    /// How often due retries are promoted, expired workers reaped and the handler's own
    /// housekeeping done.
    package var housekeeping: Duration
    /// Most jobs one `take_jobs` moves (never more than the free slots).
    package var takeBatch: Int
    /// How often the worker looks in its own in-flight list for jobs no handler has (a BLMOVE
    /// whose reply was lost): once a lease unless told otherwise.
    package var orphanCheck: Duration

    /// How many slots must be free before a busy worker takes again: an eighth of its slots (at
    /// most `takeBatch`), so a full worker takes in batches rather than one job per finished one.
    package var refill: Int { min(takeBatch, max(1, concurrency / 8)) }

    /// How long the reaper keeps reaping a silent worker before forgetting it: past the lease, its
    /// last BLMOVE (sent at most half a lease after its last heartbeat) must have ended, plus two rounds.
    package var forgetAfter: Duration { lease + block * 2 + housekeeping * 2 }

    package init(
        concurrency: Int = Settings.concurrency.defaultCount, lease: Duration = Settings.lease.defaultDuration,
        maxRedeliveries: Int = Settings.maxRedeliveries.defaultCount, shutdownGrace: Duration = Settings.shutdownGrace.defaultDuration,
        block: Duration = .seconds(1), housekeeping: Duration = .seconds(1), takeBatch: Int = 32,
        orphanCheck: Duration? = nil
    ) {
        precondition(takeBatch > 0, "takeBatch must be positive")
        self.takeBatch = takeBatch
        self.concurrency = concurrency
        self.lease = lease
        self.maxRedeliveries = maxRedeliveries
        self.shutdownGrace = shutdownGrace
        self.block = block
        self.housekeeping = housekeeping
        self.orphanCheck = orphanCheck ?? lease
    }

    /// Its own settings: `IAP_CONCURRENCY`, `IAP_LEASE_MS`, `IAP_MAX_REDELIVERIES`, `IAP_SHUTDOWN_GRACE_MS`.
    package init(reading source: SettingSource) throws(ConfigurationError) {
        self.init(
            concurrency: try source.count(Settings.concurrency), lease: try source.duration(Settings.lease),
            maxRedeliveries: try source.count(Settings.maxRedeliveries), shutdownGrace: try source.duration(Settings.shutdownGrace))
    }
}

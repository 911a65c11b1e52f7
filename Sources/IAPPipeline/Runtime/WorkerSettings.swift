/// How a stage worker runs.
public struct WorkerSettings: Sendable {
    /// Jobs handled at once by this process.
    public var concurrency: Int
    public var leaseMs: Int
    public var maxRedeliveries: Int
    public var shutdownGraceMs: Int
    /// How long one BLMOVE waits; bounds how fast an idle worker notices a stop.
    public var blockMs: Int
    /// How often due retries are promoted and expired workers reaped.
    public var housekeepingMs: Int
    /// Most jobs one `take_jobs` moves (never more than the free slots).
    public var takeBatch: Int

    /// How many slots must be free before a busy worker takes again: an eighth of its slots (at
    /// most `takeBatch`), so a full worker takes in batches rather than one job per finished one.
    public var refill: Int { min(takeBatch, max(1, concurrency / 8)) }

    /// How long the reaper keeps reaping a silent worker before forgetting it: past the lease, its
    /// last BLMOVE (sent at most half a lease after its last heartbeat) must have ended, plus two rounds.
    public var forgetAfterMs: Int { leaseMs + 2 * blockMs + 2 * housekeepingMs }

    public init(
        concurrency: Int = 64, leaseMs: Int = 30000, maxRedeliveries: Int = 5, shutdownGraceMs: Int = 25000,
        blockMs: Int = 1000, housekeepingMs: Int = 1000, takeBatch: Int = 32
    ) {
        precondition(takeBatch > 0, "takeBatch must be positive")
        self.takeBatch = takeBatch
        self.concurrency = concurrency
        self.leaseMs = leaseMs
        self.maxRedeliveries = maxRedeliveries
        self.shutdownGraceMs = shutdownGraceMs
        self.blockMs = blockMs
        self.housekeepingMs = housekeepingMs
    }

    public init(_ configuration: PipelineConfiguration, concurrency: Int? = nil) {
        self.init(
            concurrency: concurrency ?? configuration.concurrency, leaseMs: configuration.leaseMs,
            maxRedeliveries: configuration.maxRedeliveries, shutdownGraceMs: configuration.shutdownGraceMs)
    }
}

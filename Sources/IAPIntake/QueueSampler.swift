import PipelineCore
import Logging
import ServiceLifecycle

/// The intake's look at the queues every `every` (depth and oldest job's age per queue, retries
/// scheduled, dead letters, held purchases, events written): one pipelined read, no SCAN. For the
/// metrics when they are on, and always for the console's last hour (`queue-history`: the first
/// sample of each minute of any intake is kept).
package struct QueueSampler: Service {
    let store: PipelineStore
    let every: Duration
    let metrics: Bool
    let logger: Logger
    let now: @Sendable () -> Int64

    package init(
        store: PipelineStore, every: Duration = .seconds(5), metrics: Bool = true, logger: Logger,
        now: @escaping @Sendable () -> Int64 = { currentTimeMs() }
    ) {
        self.store = store
        self.every = every
        self.metrics = metrics
        self.logger = logger
        self.now = now
    }

    package func run() async throws {
        let (store, metrics, now) = (store, metrics, now)
        await roundsUntilShutdown(every: every, logger: logger, failure: "queue sample failed") {
            try await Self.round(store, metrics: metrics, now: now())
        }
    }

    /// One look: the metrics set, the minute's sample kept if it is the minute's first.
    package static func round(_ store: PipelineStore, metrics: Bool, now: Int64) async throws {
        let sample = try await store.queueSample(now: now)
        if metrics { PipelineMetrics.sampled(sample) }
        try await store.recordQueueSample(sample, now: now)
    }
}

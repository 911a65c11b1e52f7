import PipelineCore
import Logging
import ServiceLifecycle

/// The intake's look at the queues every `every` for the metrics (depth and oldest job's age per
/// queue, retries scheduled, dead letters, held purchases): one pipelined read, no SCAN.
package struct QueueSampler: Service {
    let store: PipelineStore
    let every: Duration
    let logger: Logger

    package init(store: PipelineStore, every: Duration = .seconds(5), logger: Logger) {
        self.store = store
        self.every = every
        self.logger = logger
    }

    package func run() async throws {
        let store = store
        await roundsUntilShutdown(every: every, logger: logger, failure: "queue sample failed") {
            PipelineMetrics.sampled(try await store.queueSample())
        }
    }
}

import Logging
import ServiceLifecycle

/// One stage in one process: a `StageWorker` per bucket of the layout, all under one worker id
/// (each bucket has its own worker set and in-flight list, so the names do not meet) and sharing
/// one budget of jobs (`IAP_CONCURRENCY`, served first come, first served, so no bucket starves).
/// With one bucket it is exactly one `StageWorker`.
///
/// Every process serves every bucket: a process given only some buckets would leave the others
/// to processes that may not exist, and a bucket no process serves is a lost order in waiting. The
/// cost is one blocking connection per bucket per process (an idle bucket's wait holds no slot).
package final class StageWorkers: Service, Sendable {
    package let workers: [StageWorker]
    package let slots: JobSlots

    package init(handler: any JobHandler, store: PipelineStore, settings: WorkerSettings, workerID: String? = nil, logger: Logger) {
        let id = workerID ?? StageWorker.makeWorkerID()
        let slots = JobSlots(count: settings.concurrency)
        self.slots = slots
        workers = store.keys.everyBucket.map { keys in
            StageWorker(
                handler: handler, store: store.with(keys: keys), settings: settings, workerID: id, slots: slots, logger: logger)
        }
    }

    /// `<stage>:<worker-id>`: the same in every bucket.
    package var member: String { workers[0].member }

    package func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            for worker in workers {
                group.addTask { try await worker.run() }
            }
        }
    }

    /// Stops every bucket's worker (see `StageWorker.stop`).
    package func stop() {
        for worker in workers { worker.stop() }
    }
}

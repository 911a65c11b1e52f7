/// A stage's logic: given a job the worker holds, end it with one transition.
package protocol JobHandler: Sendable {
    var stage: Stage { get }
    /// The scripts that move this stage's jobs on (its `iap_jobs_total{outcome}`): reported at
    /// 0 from the worker's start, so `rate()` and alerts work on a quiet stage.
    var transitions: [any PipelineScript.Type] { get }
    /// Whether a decoded job is one this stage can handle (by default: it is at this stage). The
    /// runtime dead-letters one it cannot decode or this refuses, before any handler sees it.
    func accepts(_ job: Job) -> Bool
    /// Handles one job from the worker's in-flight list, decoded once by the runtime. A job left
    /// there (the worker stopped, or Redis stayed away) goes back to its queue on graceful stop or
    /// through the reaper.
    func handle(_ held: HeldJob) async
    /// This stage's periodic work beside its jobs (queueing due re-checks, routing fulfilment
    /// events), run by each of its workers every housekeeping round; none by default.
    func housekeeping(_ worker: WorkerContext) async throws
}

extension JobHandler {
    package func accepts(_ job: Job) -> Bool { job.stage == stage }
    package var transitions: [any PipelineScript.Type] { [] }
    package func housekeeping(_ worker: WorkerContext) async throws {}
}

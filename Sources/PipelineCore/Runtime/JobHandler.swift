/// A stage's logic: given a job the worker holds, end it with one transition.
public protocol JobHandler: Sendable {
    var stage: Stage { get }
    /// The scripts that move this stage's jobs on (its `iap_jobs_total{outcome}`): reported at
    /// 0 from the worker's start, so `rate()` and alerts work on a quiet stage.
    var transitions: [any PipelineScript.Type] { get }
    /// Handles one job from `worker`'s in-flight list. A job left there (the worker stopped, or
    /// Redis stayed away) goes back to its queue on graceful stop or through the reaper.
    func handle(_ payload: String, worker: WorkerContext) async
    /// This stage's periodic work beside its jobs (queueing due re-checks, routing fulfilment
    /// events), run by each of its workers every housekeeping round; none by default.
    func housekeeping(_ worker: WorkerContext) async throws
}

extension JobHandler {
    public var transitions: [any PipelineScript.Type] { [] }
    public func housekeeping(_ worker: WorkerContext) async throws {}
}

/// A stage's logic: given a job the worker holds, end it with one transition.
public protocol JobHandler: Sendable {
    var stage: Stage { get }
    /// Handles one job from `worker`'s in-flight list. A job left there (the worker stopped, or
    /// Redis stayed away) goes back to its queue on graceful stop or through the reaper.
    func handle(_ payload: String, worker: WorkerContext) async
}

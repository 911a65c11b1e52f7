/// A job a worker holds in its in-flight list: the bytes that name it there, decoded once by the
/// runtime, and the moves a handler ends it with (each one call: the script and what its result
/// means for the job).
package struct HeldJob: Sendable {
    /// The job's exact bytes in the in-flight list: every move names the job by them.
    package let payload: String
    /// The job as taken (`payload` decoded once): what a retry parks again, in its stage. What it
    /// moves on as is built by the handler from it (a typed piece of work of the next stage's
    /// kind), never held in its place.
    package let job: Job
    package let worker: WorkerContext

    /// Dead-letters the job under its own ticket (its part's, on a part).
    package func deadLetter(reason: String, error: String, attempts: Int? = nil) async {
        await worker.deadLetter(payload, ticket: job.ownTicket, reason: reason, error: error, attempts: attempts ?? job.attempts)
    }

    /// What a move's result means beyond success: a lost lease logged, a missing ticket dead-lettered.
    package func settle(_ result: TransitionResult?, by script: any PipelineScript.Type) async {
        await worker.settle(result, payload: payload, job: job, by: script)
    }

    /// One move: `body` (one call of `script`) retried while Redis is away, then settled; its
    /// result (`nil`: it never ran, and the job stays in flight for the stop or the reaper).
    @discardableResult
    package func move(by script: any PipelineScript.Type, _ body: () async throws -> TransitionResult) async -> TransitionResult? {
        let result = await worker.transition(script, body)
        await settle(result, by: script)
        return result
    }
}

/// A job a worker holds in its in-flight list: the bytes that name it there, decoded once by the
/// runtime, and the moves a handler ends it with (each one call: the script and what its result
/// means for the job).
package struct HeldJob: Sendable {
    /// The job's exact bytes in the in-flight list: every move names the job by them.
    package let payload: String
    /// The job as taken (`payload` decoded): what a retry parks again, in its stage, whatever the
    /// handler amended on the way.
    package let taken: Job
    /// The job as it moves on: `taken`, amended by the handler on the way.
    package let job: Job
    package let worker: WorkerContext

    package init(payload: String, job: Job, worker: WorkerContext) {
        self.init(payload: payload, taken: job, job: job, worker: worker)
    }

    private init(payload: String, taken: Job, job: Job, worker: WorkerContext) {
        self.payload = payload
        self.taken = taken
        self.job = job
        self.worker = worker
    }

    /// The same job in the same place, its content amended on the way (what it moves on as; a
    /// retry still parks it as taken).
    package func amended(_ job: Job) -> HeldJob { HeldJob(payload: payload, taken: taken, job: job, worker: worker) }

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

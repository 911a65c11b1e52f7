import NIOCore
import NIOPosix

/// The task executor every pipeline process's tasks prefer: NIO's event loops, as for its global
/// executor, but a job runs as nonisolated code (no serial executor of its own) with this
/// executor preferred.
///
/// Why: NIO runs a global job on the event loop's serial executor, so each call to (and return
/// from) a nonisolated `async` function found the task on the "wrong" executor and hopped: the
/// task was enqueued on the event loop again and run from its next tick, about 100 hops a job
/// in a stage, a quarter of a verifier's instructions (callgrind). With the preference, the
/// runtime sees that the task already runs where such a function wants it and calls it directly.
///
/// The loop is the one the job was enqueued from when that is one of NIO's (a reply read from a
/// socket resumes its task on that thread, as before); from any other thread, the next one.
package final class EventLoopTaskExecutor: TaskExecutor {
    /// The one the processes use.
    package static let shared = EventLoopTaskExecutor()

    /// Told of each job enqueued (the tests count the hops); nil in the processes.
    private let onEnqueue: (@Sendable () -> Void)?

    package init(onEnqueue: (@Sendable () -> Void)? = nil) {
        self.onEnqueue = onEnqueue
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        onEnqueue?()
        let job = UnownedJob(job)
        MultiThreadedEventLoopGroup.singleton.any().execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}

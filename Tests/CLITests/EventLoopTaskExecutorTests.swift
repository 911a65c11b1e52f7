import IAPCLI
import NIOConcurrencyHelpers
import NIOPosix
import Testing

/// The task executor the processes prefer: its jobs run on NIO's event loops, and a task that
/// prefers it calls nonisolated `async` functions without being enqueued again for each.
struct EventLoopTaskExecutorTests {
    @Test func aTaskThatPrefersItRunsOnAnEventLoopAndCallsAsyncFunctionsWithoutHopping() async {
        let enqueued = NIOLockedValueBox(0)
        let executor = EventLoopTaskExecutor(onEnqueue: { enqueued.withLockedValue { $0 += 1 } })
        let (onALoop, sum) = await withTaskExecutorPreference(executor) {
            var sum = 0
            for step in 0..<1_000 { sum += await Self.passOn(step) }
            return (MultiThreadedEventLoopGroup.currentEventLoop != nil, sum)
        }
        #expect(onALoop)
        #expect(sum == 499_500)
        // Entering the preference is one job, and leaving may be one more. Run as NIO runs a
        // global job (on the loop's serial executor), the same loop made 1,002: one a call.
        #expect(enqueued.withLockedValue { $0 } <= 4)
    }

    /// A nonisolated `async` function that never suspends: it wants the generic executor.
    @inline(never)
    nonisolated private static func passOn(_ value: Int) async -> Int { value }
}

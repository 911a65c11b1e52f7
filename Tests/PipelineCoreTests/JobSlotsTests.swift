@testable import PipelineCore
import Testing

/// The budget of jobs the workers of one process share: first come, first served.
@Suite struct JobSlotsTests {
    @Test func waitersAreServedInTheOrderTheyCameAndOnlyWithWhatTheyNeed() async throws {
        let slots = JobSlots(count: 4)
        #expect(await slots.acquire(upTo: 3) == 3)
        // One slot free: a waiter wanting at least two waits, and so does everyone behind it.
        let (served, record) = AsyncStream<String>.makeStream()
        let first = Task {
            let got = await slots.acquire(atLeast: 2, upTo: 2)
            record.yield("first:\(got)")
        }
        while slots.waiting < 1 { await Task.yield() }
        let second = Task {
            let got = await slots.acquire(upTo: 1)
            record.yield("second:\(got)")
        }
        while slots.waiting < 2 { await Task.yield() }
        slots.release(1)
        var order = served.makeAsyncIterator()
        #expect(await order.next() == "first:2")
        #expect(slots.free == 0 && slots.waiting == 1)
        slots.release(2)
        #expect(await order.next() == "second:1")
        #expect(slots.free == 1)
        _ = await (first.value, second.value)
    }

    @Test func aForcedSlotGoesBelowZeroAndComesBack() async {
        let slots = JobSlots(count: 1)
        #expect(await slots.acquire(upTo: 5) == 1)
        slots.force()
        #expect(slots.free == -1)
        slots.release(2)
        #expect(slots.free == 1)
    }

    @Test func aStopAnswersEveryWaiterWithNothingAndEveryLaterAsk() async {
        let slots = JobSlots(count: 1)
        #expect(await slots.acquire(upTo: 1) == 1)
        let waiting = Task { await slots.acquire(upTo: 1) }
        while slots.waiting < 1 { await Task.yield() }
        slots.stop()
        #expect(await waiting.value == 0)
        #expect(await slots.acquire(upTo: 1) == 0)
    }

    @Test func aCancelledWaiterLeavesTheLineWithNothing() async {
        let slots = JobSlots(count: 1)
        #expect(await slots.acquire(upTo: 1) == 1)
        let waiting = Task { await slots.acquire(upTo: 1) }
        while slots.waiting < 1 { await Task.yield() }
        waiting.cancel()
        #expect(await waiting.value == 0)
        #expect(slots.waiting == 0)
        slots.release()
        #expect(slots.free == 1)
    }
}

import Synchronization

/// A process's budget of jobs in hand (`IAP_CONCURRENCY`), shared by its stage's workers — one
/// per bucket. A worker asks for slots before it takes jobs; waiters are served first come, first
/// served, so a busy bucket cannot starve a quiet one. A job that a blocking wait returns is taken
/// with `force()` even when none is free (the wait held no slot, so idle buckets cost none): the
/// process then holds at most `count` plus one per bucket. Every slot goes back with `release`.
package final class JobSlots: Sendable {
    package let count: Int
    private let state: Mutex<State>

    private struct Waiter {
        var id: UInt64
        var atLeast: Int
        var upTo: Int
        var continuation: CheckedContinuation<Int, Never>
    }

    private struct State {
        /// Below zero while forced jobs run beyond the budget.
        var free: Int
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var stopped = false
    }

    package init(count: Int) {
        precondition(count > 0, "a budget of jobs needs at least one slot")
        self.count = count
        state = Mutex(State(free: count))
    }

    /// Waits until at least `atLeast` slots are free (and every earlier waiter served), then takes
    /// up to `upTo` of them. Answers 0 once the budget is stopped or the task is cancelled.
    package func acquire(atLeast: Int = 1, upTo: Int) async -> Int {
        let atLeast = max(1, min(atLeast, upTo, count))
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let granted = state.withLock { state -> Int? in
                    if state.stopped || Task.isCancelled { return 0 }
                    if state.waiters.isEmpty, state.free >= atLeast {
                        let taken = min(state.free, upTo)
                        state.free -= taken
                        return taken
                    }
                    state.waiters.append(Waiter(id: id, atLeast: atLeast, upTo: upTo, continuation: continuation))
                    return nil
                }
                if let granted { continuation.resume(returning: granted) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: 0)
        }
    }

    /// Takes one slot whether or not one is free: for a job a blocking wait brought.
    package func force() {
        state.withLock { $0.free -= 1 }
    }

    /// Gives `slots` back and serves the waiters they now satisfy, in order.
    package func release(_ slots: Int = 1) {
        guard slots > 0 else { return }
        let served = state.withLock { state -> [(CheckedContinuation<Int, Never>, Int)] in
            state.free += slots
            var served: [(CheckedContinuation<Int, Never>, Int)] = []
            while let first = state.waiters.first, state.free >= first.atLeast {
                state.waiters.removeFirst()
                let taken = min(state.free, first.upTo)
                state.free -= taken
                served.append((first.continuation, taken))
            }
            return served
        }
        for (continuation, taken) in served { continuation.resume(returning: taken) }
    }

    /// Ends every wait (answering 0) and every later one: the process is stopping.
    package func stop() {
        let waiters = state.withLock { state -> [Waiter] in
            state.stopped = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: 0) }
    }

    /// Slots free now (negative while forced jobs run beyond the budget).
    package var free: Int { state.withLock { $0.free } }

    /// Workers waiting for slots now.
    package var waiting: Int { state.withLock { $0.waiters.count } }
}

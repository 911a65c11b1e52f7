import NIOConcurrencyHelpers

/// A stage's group commits (`GroupCommit`), one per worker: a handler serves the workers of every
/// bucket, and a batch must go to one bucket's keys and one in-flight list. Each worker's batcher
/// is made the first time that worker asks (`make`), then kept for the process's life (a process
/// has one worker per bucket: the map is bounded by the layout).
public final class WorkerBatchers<Item: Sendable, Output: Sendable>: Sendable {
    public typealias Make = @Sendable (WorkerContext) -> GroupCommit<Item, Output>

    private let make: Make
    private let batchers = NIOLockedValueBox<[String: GroupCommit<Item, Output>]>([:])

    public init(_ make: @escaping Make) {
        self.make = make
    }

    /// Hands `item` to `worker`'s batcher and returns its own output.
    public func submit(_ item: Item, by worker: WorkerContext) async throws -> Output {
        // The worker's in-flight list names its bucket and itself: no two workers share it.
        let name = worker.store.keys.inflight(member: worker.member)
        let batcher = batchers.withLockedValue { batchers in
            if let batcher = batchers[name] { return batcher }
            let batcher = make(worker)
            batchers[name] = batcher
            return batcher
        }
        return try await batcher.submit(item)
    }
}

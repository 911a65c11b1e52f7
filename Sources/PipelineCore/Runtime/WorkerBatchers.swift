/// A stage's group commits (`GroupCommit`), one per worker: a handler serves the workers of every
/// bucket, and a batch must go to one bucket's keys and one in-flight list. Each worker's batcher
/// is made the first time that worker asks (`make`) and kept with the worker (`WorkerContext`).
package final class WorkerBatchers<Item: Sendable, Output: Sendable>: Sendable {
    package typealias Make = @Sendable (WorkerContext) -> GroupCommit<Item, Output>

    private let make: Make

    package init(_ make: @escaping Make) {
        self.make = make
    }

    /// Hands `item` to `worker`'s batcher and returns its own output.
    package func submit(_ item: Item, by worker: WorkerContext) async throws -> Output {
        let batcher = worker.batchers.withLockedValue { batchers in
            if let batcher = batchers[ObjectIdentifier(self)] as? GroupCommit<Item, Output> { return batcher }
            let batcher = make(worker)
            batchers[ObjectIdentifier(self)] = batcher
            return batcher
        }
        return try await batcher.submit(item)
    }
}

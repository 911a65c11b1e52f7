import NIOConcurrencyHelpers

/// The intake's group commit of `submit_receipt`, one per bucket (a batch's keys lie in one
/// slot): a submission that finds none on the wire goes at once, alone; those that arrive while
/// one is on the wire go together in the next call (`ScriptBatch`). Each still gets its own
/// answer; a failed call fails each of its submissions, as it would have failed alone.
package final class SubmitBatchers: Sendable {
    private typealias Batcher = GroupCommit<SubmitReceipt, SubmitReceipt.Reply>
    private let batchers = NIOLockedValueBox<[Int: Batcher]>([:])
    private let store: PipelineStore
    private let maxBatch: Int

    /// `store`: where the submissions go (every bucket of its layout).
    package init(store: PipelineStore, maxBatch: Int = 64) {
        self.store = store
        self.maxBatch = maxBatch
    }

    /// `call` (a submission to `bucket`) with the others of its bucket.
    func submit(_ call: SubmitReceipt, bucket: Int) async throws -> SubmitReceipt.Reply {
        let (store, maxBatch) = (store, maxBatch)
        let batcher = batchers.withLockedValue { batchers in
            if let batcher = batchers[bucket] { return batcher }
            let batcher = Batcher(maxBatch: maxBatch) { calls in try await store.runBatch(calls, replicated: true) }
            batchers[bucket] = batcher
            return batcher
        }
        return try await batcher.submit(call)
    }
}

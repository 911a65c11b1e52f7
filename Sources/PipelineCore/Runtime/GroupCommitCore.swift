import NIOConcurrencyHelpers

/// `GroupCommit`'s turn-taking, over items and outputs of any type (`any Sendable`): not
/// generic, so compiled once, for every stage, with no generic metadata to look up at a call.
/// Swift (6.3) does not specialise a generic `async` function across modules, even an
/// `@inlinable` one, so a generic version ran unspecialised in every stage whose module named
/// its items (the grant's, the dedupe's): about 120 metadata lookups a call, 40 to 50 thousand
/// instructions a grant. `GroupCommit` casts each item and output once, at the edges.
final class GroupCommitCore: Sendable {
    typealias Item = any Sendable
    typealias Output = any Sendable
    /// Writes the items in one go and returns one output per item, in order. A throw fails
    /// every item of that batch (each caller decides whether to submit again).
    typealias Flush = @Sendable ([Item]) async throws -> [Output]

    private let maxBatch: Int
    private let flush: Flush
    private let state = NIOLockedValueBox(State())

    private enum Wake: Sendable {
        case done(Result<Output, any Error>)
        /// Your item waits at the head of the queue: write it and those behind it.
        case lead
    }

    private struct Waiting {
        let id: Int
        let item: Item
    }

    private struct State {
        var writing = false
        var lastID = 0
        var queue: [Waiting] = []
        var sleepers: [Int: CheckedContinuation<Wake, Never>] = [:]
        /// Wakes that came before their caller went to sleep.
        var early: [Int: Wake] = [:]
    }

    init(maxBatch: Int, flush: @escaping Flush) {
        precondition(maxBatch > 0, "maxBatch must be positive")
        self.maxBatch = maxBatch
        self.flush = flush
    }

    /// Items queued behind the write on the wire.
    var waiting: Int {
        state.withLockedValue { $0.queue.count }
    }

    func submit(_ item: Item) async throws -> Output {
        let queued: Int? = state.withLockedValue { state in
            if !state.writing {
                state.writing = true
                return nil
            }
            state.lastID += 1
            state.queue.append(Waiting(id: state.lastID, item: item))
            return state.lastID
        }
        guard let id = queued else { return try await write(leading: item) }
        let wake = await withCheckedContinuation { continuation in
            let early = state.withLockedValue { state -> Wake? in
                if let wake = state.early.removeValue(forKey: id) { return wake }
                state.sleepers[id] = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
        switch wake {
        case .done(let output): return try output.get()
        case .lead: return try await write(queuedAs: id)
        }
    }

    /// Writes `item` (not queued) with the items waiting.
    private func write(leading item: Item) async throws -> Output {
        let batch = state.withLockedValue { Self.take(maxBatch - 1, from: &$0.queue) }
        return try await write([Waiting(id: 0, item: item)] + batch, own: 0)
    }

    /// Writes from the head of the queue, where the item of `id` is.
    private func write(queuedAs id: Int) async throws -> Output {
        let batch = state.withLockedValue { Self.take(maxBatch, from: &$0.queue) }
        return try await write(batch, own: id)
    }

    private static func take(_ count: Int, from queue: inout [Waiting]) -> [Waiting] {
        let taken = Array(queue.prefix(count))
        queue.removeFirst(taken.count)
        return taken
    }

    private func write(_ batch: [Waiting], own: Int) async throws -> Output {
        let outputs: Result<[Output], any Error>
        do {
            let written = try await flush(batch.map { $0.item })
            guard written.count == batch.count else { throw GroupCommitError.outputsDoNotMatch(batch.count, written.count) }
            outputs = .success(written)
        } catch {
            outputs = .failure(error)
        }
        var mine: Result<Output, any Error>?
        var wakes: [(CheckedContinuation<Wake, Never>, Wake)] = []
        state.withLockedValue { state in
            for (index, waiting) in batch.enumerated() {
                let output = outputs.map { $0[index] }
                if waiting.id == own {
                    mine = output
                } else if let sleeper = state.sleepers.removeValue(forKey: waiting.id) {
                    wakes.append((sleeper, .done(output)))
                } else {
                    state.early[waiting.id] = .done(output)
                }
            }
            // The turn goes to the oldest caller still waiting, or nobody is writing any more.
            if let next = state.queue.first {
                if let sleeper = state.sleepers.removeValue(forKey: next.id) {
                    wakes.append((sleeper, .lead))
                } else {
                    state.early[next.id] = .lead
                }
            } else {
                state.writing = false
            }
        }
        for (sleeper, wake) in wakes { sleeper.resume(returning: wake) }
        guard let mine else { throw GroupCommitError.ownItemMissing }
        return try mine.get()
    }
}

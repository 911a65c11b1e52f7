/// Group commit: each caller hands in one item and gets its own output back. A caller that finds
/// nobody writing writes at once, taking along every item that waits (up to `maxBatch`), in one
/// call of `flush`; when it is done it hands the turn to the oldest caller still waiting. Under
/// light load each item goes alone, without waiting for a batch to fill; under load, items that
/// arrive while a write is on the wire ride together in the next one. No task of its own: the
/// writing is done by the callers.
package final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    /// Writes the items in one go and returns one output per item, in order. A throw fails
    /// every item of that batch (each caller decides whether to submit again).
    package typealias Flush = @Sendable ([Item]) async throws -> [Output]

    /// The turn-taking itself, not generic (`GroupCommitCore` says why).
    private let core: GroupCommitCore

    package init(maxBatch: Int, flush: @escaping Flush) {
        core = GroupCommitCore(maxBatch: maxBatch) { items in
            let typed = items.compactMap { $0 as? Item }
            guard typed.count == items.count else { throw GroupCommitError.ofAnotherType }
            return try await flush(typed).map { $0 as any Sendable }
        }
    }

    /// Items queued behind the write on the wire.
    package var waiting: Int { core.waiting }

    package func submit(_ item: Item) async throws -> Output {
        guard let output = try await core.submit(item) as? Output else { throw GroupCommitError.ofAnotherType }
        return output
    }
}

/// A broken promise of a flush, or of the turn-taking (none should ever happen).
package enum GroupCommitError: Error, Equatable {
    case outputsDoNotMatch(Int, Int)
    case ownItemMissing
    /// An item or output that is not of the commit's types.
    case ofAnotherType
}

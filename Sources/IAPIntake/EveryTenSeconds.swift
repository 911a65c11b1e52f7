import NIOConcurrencyHelpers

/// The intake's refusals for a full queue, said in the log at most once every 10 s.
let queueFullRefusals = EveryTenSeconds()

/// Counts events and says, at most once every 10 s, how many came since it last said.
final class EveryTenSeconds: Sendable {
    private let state = NIOLockedValueBox((count: 0, last: ContinuousClock.Instant?.none))

    /// The count to report now (this event included), or `nil` while the 10 s are not over.
    func count() -> Int? {
        state.withLockedValue { state in
            state.count += 1
            if let last = state.last, ContinuousClock.now - last < .seconds(10) { return nil }
            defer { state = (0, .now) }
            return state.count
        }
    }
}

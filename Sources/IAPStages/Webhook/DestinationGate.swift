import Synchronization

/// How many POSTs each webhook destination has under way in this worker, each bounded by its
/// share (`WebhookDestination.shares`): a destination that answers slowly holds at most its share
/// of the slots, and the others keep theirs. It also keeps how long each destination's POSTs take
/// (a moving average), which is how long a job turned away waits before its next turn.
package final class DestinationGate: Sendable {
    private struct State {
        var inFlight: [String: Int] = [:]
        /// Milliseconds, an exponential moving average of the last POSTs.
        var averageMs: [String: Double] = [:]
    }

    private let shares: [String: Int]
    private let state = Mutex(State())

    package init(shares: [String: Int]) {
        self.shares = shares
    }

    /// Takes a place for a POST to `destination`; `false` when its share is taken (the job waits
    /// its turn in the retry set, spending no attempt).
    package func enter(_ destination: String) -> Bool {
        let share = shares[destination] ?? 1
        return state.withLock { state in
            guard state.inFlight[destination, default: 0] < share else { return false }
            state.inFlight[destination, default: 0] += 1
            return true
        }
    }

    /// Gives the place back; `took`: how long its POST took.
    package func leave(_ destination: String, took: Duration) {
        let ms = Double(took.components.seconds) * 1000 + Double(took.components.attoseconds) / 1e15
        state.withLock { state in
            state.inFlight[destination, default: 1] -= 1
            let average = state.averageMs[destination] ?? ms
            state.averageMs[destination] = average * 0.8 + ms * 0.2
        }
    }

    /// How long a job turned away from `destination` waits: one to two of its POSTs, within
    /// 50 ms…`longest`, so a backlog for a slow destination cycles slowly and a fast one's quickly.
    package func wait(for destination: String, longest: Duration) -> Duration {
        let averageMs = state.withLock { $0.averageMs[destination] } ?? 100
        let ms = Int64(averageMs * Double.random(in: 1...2))
        return min(longest, .milliseconds(max(50, ms)))
    }
}

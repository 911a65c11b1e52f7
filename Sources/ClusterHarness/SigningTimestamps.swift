import Foundation
import Synchronization

/// The timestamps a signing client gives its requests: the clock's second, or one past the last
/// given to an identical body (the same body signed twice in one second has one signature, and
/// the intake would refuse the second as a replay).
final class SigningTimestamps: Sendable {
    private let last = Mutex<[Data: Int64]>([:])

    func next(for body: Data) -> Int64 {
        let now = Int64(Date().timeIntervalSince1970)
        return last.withLock { last in
            // Bodies signed before this second can no longer collide with a new one.
            if last.count > 10_000 { last = last.filter { $0.value >= now } }
            let timestamp = max(now, (last[body] ?? 0) + 1)
            last[body] = timestamp
            return timestamp
        }
    }
}

import Foundation
import Logging
import ServiceLifecycle

/// The timing of a sweep that one process of the fleet runs at a time, under a lease in Redis
/// (the notification sweep's and the refund sweep's): who this process is, how long it holds the
/// lease, and how long it waits after each look.
package struct LeasedSweep: Sendable {
    /// How often a complete sweep runs.
    package let period: Duration
    /// This process, as the sweep's lease names it.
    let owner = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):\(UUID().uuidString.prefix(8))"

    package init(period: Duration) {
        self.period = period
    }

    /// What one look did.
    package enum Look: Sendable, Equatable {
        /// This process swept, completely or not.
        case swept(complete: Bool)
        /// Not this process's turn (not due, or another process sweeps).
        case waited
        /// Redis could not be asked.
        case failed
    }

    /// How long a sweep holds the fleet's lease between two steps: a holder that dies frees it then.
    var lease: Duration { min(max(period, .seconds(10)), .seconds(120)) }
    /// A sweep that did not finish is tried again this soon (at most a period).
    var retryAfterFailure: Duration { min(period, .seconds(60)) }
    /// When not this process's turn: every half lease (at most every half period, at least every
    /// 100 ms), soon enough to take over from a holder that died; one small script each.
    var nextLook: Duration { max(min(period, lease) / 2, .milliseconds(100)) }

    /// How long to wait after `look` before looking again.
    func wait(after look: Look) -> Duration {
        switch look {
        case .swept(let complete): complete ? period : retryAfterFailure
        case .waited: nextLook
        case .failed: min(period, .seconds(5))
        }
    }

    /// The lease taken (`claim`, this process as owner): Redis's time and the sweep's cursors; or
    /// why not, as the look's turn (`waited`, or `failed` with the error, logged as `what`'s).
    func claim(
        _ what: String, logger: Logger, by claim: (_ owner: String, _ lease: Duration) async throws -> NotificationSweepClaim
    ) async -> Result<(now: Int64, cursors: [String: Int64]), ClaimRefused> {
        let claimed: NotificationSweepClaim
        do {
            claimed = try await claim(owner, lease)
        } catch {
            logger.warning("cannot claim the \(what)", metadata: ["error": "\(error)"])
            return .failure(.failed("\(error)"))
        }
        guard case .claimed(let now, let cursors) = claimed else { return .failure(.waited) }
        return .success((now, cursors))
    }

    /// A look that did not take the lease.
    enum ClaimRefused: Error {
        case waited
        case failed(String)
    }

    /// Looks (`look`), waits as the look says, and again, until the service group shuts down.
    func run(_ look: @escaping @Sendable () async -> Look) async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: wait(after: await look()))
            }
        }
    }
}

import Foundation
import NIOConcurrencyHelpers

/// An Apple outage the simulator is playing: every verification answers 503, or hangs past any
/// client timeout, until it ends. Set with `POST /control/outage`; it always ends on its own, so
/// a drill that dies mid-outage leaves no simulator stuck down.
public struct SimulatedOutage: Codable, Sendable, Equatable {
    public enum Mode: String, Codable, Sendable {
        /// HTTP 503, as Apple answers when overloaded.
        case unavailable
        /// No answer until the outage ends (then 503): the client's timeout fires first.
        case timeout
        /// Ends the current outage.
        case off
    }

    public var mode: Mode
    public var durationMs: Int

    public init(mode: Mode, durationMs: Int) {
        self.mode = mode
        self.durationMs = durationMs
    }

    enum CodingKeys: String, CodingKey {
        case mode
        case durationMs = "duration_ms"
    }
}

/// The outage in force, if any, with its end time.
final class OutageState: Sendable {
    private let current = NIOLockedValueBox<(mode: SimulatedOutage.Mode, until: ContinuousClock.Instant)?>(nil)

    func start(_ outage: SimulatedOutage) {
        current.withLockedValue { state in
            guard outage.mode != .off, outage.durationMs > 0 else {
                state = nil
                return
            }
            state = (outage.mode, .now + .milliseconds(outage.durationMs))
        }
    }

    /// The outage in force now.
    func active() -> (mode: SimulatedOutage.Mode, until: ContinuousClock.Instant)? {
        current.withLockedValue { state in
            guard let active = state, active.until > .now else {
                state = nil
                return nil
            }
            return active
        }
    }
}

/// What one of Apple's `status` codes means for the pipeline.
public enum AppleStatus: Equatable, Sendable {
    case valid
    /// 21007: a sandbox receipt sent to production; resend to sandbox.
    case sandboxReceipt
    /// 21008: a production receipt sent to sandbox; resend to production.
    case productionReceipt
    /// The receipt itself is bad: the user gets a rejection.
    case rejected
    /// Our own setup is wrong (21004 shared secret, 21000 request shape): alert, never blame the user.
    case misconfigured
    /// Apple could not answer now: try again later.
    case transient

    /// 21002 (malformed receipt data) is sometimes Apple's hiccup: retried this many attempts, then a rejection.
    public static let malformedRetryCap = 3

    /// Classifies a status; `attempt` counts from 1.
    public static func classify(_ status: Int, isRetryable: Bool = false, attempt: Int = 1) -> AppleStatus {
        switch status {
        case 0: return .valid
        case 21007: return .sandboxReceipt
        case 21008: return .productionReceipt
        case 21000, 21004: return .misconfigured
        case 21005, 21009: return .transient
        case 21002: return attempt < malformedRetryCap ? .transient : .rejected
        case 21100...21199: return isRetryable ? .transient : .rejected
        case 21000...21999: return .rejected
        // Not a code Apple documents: keep the purchase safe by retrying, then dead-lettering.
        default: return .transient
        }
    }

    /// The stable machine code a ticket or dead letter carries for a status.
    public static func reason(_ status: Int) -> String { AppleReason.appleStatus(status) }
}

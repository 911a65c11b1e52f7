/// How many new submissions a second the fleet takes from one client key and for one user
/// (`IAP_RATE_PER_KEY`, `IAP_RATE_PER_USER`; 0: no limit), and how many jobs may wait to be
/// verified before a new one is refused (`IAP_MAX_QUEUE_DEPTH`; 0: no limit). Resubmissions are free.
package struct SubmissionLimits: Sendable, Equatable {
    /// The signing key the request came with (`nil`: unsigned, no per-key limit).
    package var clientKey: String?
    package var perKey: Int
    package var perUser: Int
    /// Jobs waiting to be verified, every bucket's together (each bucket takes its even share).
    package var maxQueueDepth: Int

    package init(clientKey: String? = nil, perKey: Int = 0, perUser: Int = 0, maxQueueDepth: Int = 0) {
        self.clientKey = clientKey
        self.perKey = perKey
        self.perUser = perUser
        self.maxQueueDepth = maxQueueDepth
    }

    package static let none = SubmissionLimits()
}

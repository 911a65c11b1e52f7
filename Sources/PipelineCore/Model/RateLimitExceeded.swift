/// A new submission refused because a rate limit is spent this second.
package struct RateLimitExceeded: Error, Sendable, Equatable {
    package enum Scope: String, Sendable { case clientKey = "key", user }
    package let scope: Scope

    package init(scope: Scope) { self.scope = scope }
}

/// A new submission refused because the jobs waiting to be verified reached `IAP_MAX_QUEUE_DEPTH`
/// (the bucket's share of it): the backlog of an Apple outage must not fill Redis.
package struct QueueFull: Error, Sendable, Equatable {
    /// Jobs waiting in the submission's bucket, and that bucket's share of the limit.
    package let depth: Int
    package let limit: Int

    package init(depth: Int, limit: Int) {
        self.depth = depth
        self.limit = limit
    }
}

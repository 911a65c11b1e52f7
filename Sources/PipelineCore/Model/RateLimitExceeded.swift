/// A new submission refused because a rate limit is spent this second.
public struct RateLimitExceeded: Error, Sendable, Equatable {
    public enum Scope: String, Sendable { case clientKey = "key", user }
    public let scope: Scope

    public init(scope: Scope) { self.scope = scope }
}

/// A new submission refused because the jobs waiting to be verified reached `IAP_MAX_QUEUE_DEPTH`
/// (the bucket's share of it): the backlog of an Apple outage must not fill Redis.
public struct QueueFull: Error, Sendable, Equatable {
    /// Jobs waiting in the submission's bucket, and that bucket's share of the limit.
    public let depth: Int
    public let limit: Int

    public init(depth: Int, limit: Int) {
        self.depth = depth
        self.limit = limit
    }
}

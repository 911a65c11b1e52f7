/// A new submission refused because a rate limit is spent this second.
public struct RateLimitExceeded: Error, Sendable, Equatable {
    public enum Scope: String, Sendable { case clientKey = "key", user }
    public let scope: Scope

    public init(scope: Scope) { self.scope = scope }
}

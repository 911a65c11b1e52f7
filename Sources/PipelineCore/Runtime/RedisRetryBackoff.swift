/// How a worker's loops wait between attempts while Redis is away: 50 ms, doubling up to 1 s. The
/// cap is how long a worker may lag a Redis that is back (restarted, or a replica promoted by
/// Sentinel); while Redis is away it costs one try a second per waiting loop.
package struct RedisRetryBackoff: Sendable {
    static let first = Duration.milliseconds(50)
    static let longest = Duration.seconds(1)
    package private(set) var next = first

    package init() {}

    /// Sleeps for the current wait (a cancelled task returns at once), then doubles it.
    package mutating func pause() async {
        try? await Task.sleep(for: next)
        next = min(next * 2, Self.longest)
    }

    package mutating func reset() { next = Self.first }
}

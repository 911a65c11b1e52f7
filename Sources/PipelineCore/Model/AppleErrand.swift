/// A notify job's errand to Apple that `grant_purchases` queues in the step that grants the
/// purchase (so no crash loses it) and the notify stage runs: Set App Account Token, Finish
/// Transaction. Each has its own ticket (`<prefix>-<id>` in the purchase's bucket) and `source`.
package protocol AppleErrand: Sendable {
    /// The `source` of its job and ticket.
    static var source: String { get }
    /// The ticket id's prefix: `token`, `finish`.
    static var ticketPrefix: String { get }
    /// The notify job's work that carries this errand.
    var work: Job.Work { get }
}

extension AppleErrand {
    /// The ticket of the errand about `id`: one per id in its bucket, so a purchase granted again
    /// while one is queued or recent queues no second call.
    package static func ticket(for id: String, in keys: RedisKeys) -> String {
        keys.layout.ticketID("\(ticketPrefix)-\(id)", inBucket: keys.bucket)
    }

    /// The notify job that carries it.
    package func job(ticket: String, user: String, now: Int64) -> Job {
        Job(ticket: ticket, stage: .notify, userID: user, work: work, source: Self.source, enqueuedAt: now)
    }
}

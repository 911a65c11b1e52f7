import PipelineCore
import RedisClient

extension PipelineStore {
    /// Takes the fleet's notification sweep when it is due and free, or renews the caller's lease.
    package func claimNotificationSweep(owner: String, lease: Duration, renew: Bool = false) async throws -> NotificationSweepClaim {
        try await run(ClaimNotificationSweep(keys, owner: owner, lease: lease, renew: renew))
    }

    /// Ends the caller's sweep: `cursors` (environment → ms) for the windows read to their end, the
    /// next due `nextIn` from now. `false`: the caller's lease had expired and nothing changed.
    @discardableResult
    package func finishNotificationSweep(
        owner: String, nextIn: Duration, cursors: [String: Int64], seen: Int, new: Int, invalid: Int, error: String?
    ) async throws -> Bool {
        try await run(FinishNotificationSweep(
            keys, owner: owner, nextIn: nextIn, cursors: cursors, seen: seen, new: new, invalid: invalid, error: error))
    }

    /// The sweep's hash as it stands (`RedisKeys.notificationSweep`), for `iapctl` and tests.
    package func notificationSweepState() async throws -> [String: String] {
        try await redis.send("HGETALL", keys.notificationSweep).checked().stringDictionary
    }

    /// The refund sweep's lease and cursors (`RedisKeys.refundSweep`).
    package func refundSweepState() async throws -> [String: String] {
        try await redis.send("HGETALL", keys.refundSweep).checked().stringDictionary
    }

    /// The refund sweep's lease: the same step on its own hash (`RedisKeys.refundSweep`).
    package func claimRefundSweep(owner: String, lease: Duration, renew: Bool = false) async throws -> NotificationSweepClaim {
        try await run(ClaimNotificationSweep(keys, sweep: keys.refundSweep, owner: owner, lease: lease, renew: renew))
    }

    /// Ends the caller's refund sweep: `cursors` (`b<bucket>` → ms read up to), `asked` customers,
    /// `revoked` refunds queued. `false`: the caller's lease had expired and nothing changed.
    @discardableResult
    package func finishRefundSweep(
        owner: String, nextIn: Duration, cursors: [String: Int64], asked: Int, revoked: Int, error: String?
    ) async throws -> Bool {
        try await run(FinishNotificationSweep(
            keys, sweep: keys.refundSweep, owner: owner, nextIn: nextIn, cursors: cursors, seen: asked, new: revoked, invalid: 0,
            error: error))
    }
}

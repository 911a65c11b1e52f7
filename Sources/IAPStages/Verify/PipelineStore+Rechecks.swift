import PipelineCore
import RedisClient

extension PipelineStore {
    /// Queues the due re-checks (at most `limit`) as re-check jobs; returns how many.
    package func promoteDueRechecks(
        schedule: RecheckSchedule, ticketTTL: Duration, limit: Int = 500, now: Int64 = currentTimeMs()
    ) async throws -> Int {
        try await run(PromoteDueRechecks(keys, schedule: schedule, ticketTTL: ticketTTL, limit: limit, now: now))
    }

    /// Makes a subscription's re-check due now; `false` when no subscription has this original transaction id.
    package func forceRecheck(originalTransactionID: String, now: Int64 = currentTimeMs()) async throws -> Bool {
        try await run(ForceRecheck(keys, originalTransactionID: originalTransactionID, now: now))
    }

    /// The latest legacy receipt a client sent for a subscription (its owner's), for re-checks by `verifyReceipt`.
    package func subscriptionReceipt(originalTransactionID: String) async throws -> String? {
        try await redis.send("HGET", keys.subscription(originalTransactionID: originalTransactionID), "receipt").string
    }

    /// When a subscription's next re-check is due (ms), if it has one.
    package func recheckDue(originalTransactionID: String) async throws -> Int64? {
        let schedule = keys.ofPurchase(originalTransactionID: originalTransactionID).rechecks
        return try await redis.send("ZSCORE", schedule, originalTransactionID).string.flatMap { Int64(Double($0) ?? -1) }
    }

    /// How many re-checks are due by `horizon` from now (those overdue included), in every bucket.
    package func rechecksDue(within horizon: Duration, now: Int64 = currentTimeMs()) async throws -> Int {
        let replies = try await redis.pipeline(
            keys.everyBucket.map { RedisCommand("ZCOUNT", $0.rechecks, "-inf", String(now + horizon.milliseconds)) })
        return replies.reduce(0) { $0 + Int($1.int ?? 0) }
    }
}

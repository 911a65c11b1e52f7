import IAPStages
import PipelineCore
import RedisClient

extension PipelineStore {
    /// The purchases held now, oldest first, at most `limit` (every bucket's oldest, merged);
    /// with `after` (the last one a page showed: when it was held and its unit), those after it.
    /// A page reads `limit` (and, past the first, 50 more for ties at the same millisecond) of each
    /// bucket's index, never the whole index.
    package func heldPurchases(limit: Int, after: (at: Int64, unit: String)? = nil) async throws -> [HeldPurchase] {
        let count = max(limit, 1) + (after == nil ? 0 : 50)
        let replies = try await redis.pipeline(keys.everyBucket.map { bucket in
            after.map { RedisCommand("ZRANGE", bucket.holds, String($0.at), "+inf", "BYSCORE", "LIMIT", "0", String(count), "WITHSCORES") }
                ?? RedisCommand("ZRANGE", bucket.holds, "0", String(count - 1), "WITHSCORES")
        })
        var held: [(unit: String, at: Double)] = []
        for reply in replies {
            let items = (try reply.checked().array ?? []).compactMap(\.string)
            for start in stride(from: 0, to: items.count - 1, by: 2) { held.append((items[start], Double(items[start + 1]) ?? 0)) }
        }
        if let after { held = held.filter { ($0.at, $0.unit) > (Double(after.at), after.unit) } }
        let units = held.sorted { ($0.at, $0.unit) < ($1.at, $1.unit) }.prefix(max(limit, 1)).map(\.unit)
        if units.isEmpty { return [] }
        return try await holds(of: units).compactMap { $0 }
    }

    /// The hold of `unit`, held or decided; `nil` when it was never held.
    package func hold(unit: String) async throws -> HeldPurchase? {
        try await holds(of: [unit])[0]
    }

    /// The hold of each unit (`nil`: never held). A unit alone does not say its bucket: every
    /// bucket's hold of each unit is read, in one round trip.
    private func holds(of units: [String]) async throws -> [HeldPurchase?] {
        let buckets = keys.everyBucket
        let replies = try await redis.pipeline(units.flatMap { unit in
            buckets.map { RedisCommand("HGETALL", $0.holdInThisBucket(unit: unit)) }
        })
        return stride(from: 0, to: replies.count, by: buckets.count).map { start in
            replies[start..<start + buckets.count].lazy.compactMap { HeldPurchase(hash: $0.stringDictionary) }.first
        }
    }

    /// The original transaction of a purchase known by its unit alone (an operator names a unit):
    /// its hold's or its grant record's, whichever bucket holds it; `nil` when neither exists.
    /// One round trip (every bucket's two keys asked at once).
    package func originalTransactionID(ofUnit unit: String) async throws -> String? {
        let replies = try await redis.pipeline(keys.everyBucket.flatMap { bucket in
            [
                RedisCommand("HGET", bucket.holdInThisBucket(unit: unit), "original_transaction_id"),
                RedisCommand("HGET", bucket.grantInThisBucket(unit: unit), "original_transaction_id"),
            ]
        })
        return replies.lazy.compactMap(\.string).first
    }

    /// What an operator means by `id` (`iapctl held release|reject`): the unit itself when it was
    /// ever held (decided or not), else the units of every purchase the ticket `id` holds now (an
    /// operator has the ticket from the player's complaint). Empty when `id` is neither.
    package func heldUnits(matching id: String) async throws -> [String] {
        if try await hold(unit: id) != nil { return [id] }
        return try await heldPurchases(limit: Int(Int32.max)).filter { $0.ticket == id }.map(\.unit)
    }

    /// Grants a held purchase once (or rejects it when Apple refunded it meanwhile).
    package func releaseHeld(
        unit: String, by operatorName: String, note: String = "", now: Int64 = currentTimeMs()
    ) async throws -> HeldPurchaseResult {
        guard let original = try await originalTransactionID(ofUnit: unit) else { return .notFound }
        let result = try await run(
            ReleaseHeldPurchase(
                keys, unit: unit, originalTransactionID: original, by: operatorName, note: note, recheck: recheck, now: now),
            replicated: true)
        try await settleHeldTicket(unit: unit, originalTransactionID: original, now: now)
        if result == .decided("released") {
            // The app account token's key is in no bucket: bound after the grant, as the grant stage does.
            let hold = keys.hold(unit: unit, originalTransactionID: original)
            let fields = try await redis.send("HMGET", hold, "app_account_token", "user_id").array?.map(\.string) ?? []
            if fields.count == 2, let token = fields[0], !token.isEmpty, let user = fields[1] {
                try await bindAccountTokens([token], to: user)
            }
        }
        return result
    }

    /// Rejects a held purchase: it is never granted.
    package func rejectHeld(
        unit: String, by operatorName: String, note: String = "", now: Int64 = currentTimeMs()
    ) async throws -> HeldPurchaseResult {
        guard let original = try await originalTransactionID(ofUnit: unit) else { return .notFound }
        let result = try await run(
            RejectHeldPurchase(keys, unit: unit, originalTransactionID: original, by: operatorName, note: note, now: now), replicated: true)
        try await settleHeldTicket(unit: unit, originalTransactionID: original, now: now)
        return result
    }

    /// Tells a decided hold's ticket its purchase's outcome (`settle_held_ticket`): after the
    /// decision, and again when an operator repeats it (a crash between the two steps left the
    /// ticket saying `held`); nothing when the hold is not decided.
    private func settleHeldTicket(unit: String, originalTransactionID original: String, now: Int64) async throws {
        let fields = try await redis.send(
            "HMGET", keys.hold(unit: unit, originalTransactionID: original), "status", "decision_reason", "ticket", "transaction_id"
        ).array?.map(\.string) ?? []
        guard fields.count == 4, let status = fields[0], status == "released" || status == "rejected", let ticket = fields[2],
            let transaction = fields[3]
        else { return }
        _ = try await run(SettleHeldTicket(
            keys, ticket: ticket, transactionID: transaction, outcome: status == "released" ? .granted : .rejected,
            reason: fields[1] ?? "", now: now), replicated: true)
    }
}

import RedisClient

extension PipelineStore {
    /// The purchases held now, oldest first, at most `limit`.
    public func heldPurchases(limit: Int) async throws -> [HeldPurchase] {
        let units = (try await redis.send("ZRANGE", keys.holds, "0", String(max(limit, 1) - 1)).array ?? []).compactMap(\.string)
        if units.isEmpty { return [] }
        let replies = try await redis.pipeline(units.map { RedisCommand("HGETALL", keys.hold(unit: $0)) })
        return replies.compactMap { HeldPurchase(hash: $0.stringDictionary) }
    }

    /// The hold of `unit`, held or decided; `nil` when it was never held.
    public func hold(unit: String) async throws -> HeldPurchase? {
        HeldPurchase(hash: try await redis.send("HGETALL", keys.hold(unit: unit)).stringDictionary)
    }

    /// What an operator means by `id` (`iapctl held release|reject`): the unit itself when it was
    /// ever held (decided or not), else the units of every purchase the ticket `id` holds now (an
    /// operator has the ticket from the player's complaint). Empty when `id` is neither.
    public func heldUnits(matching id: String) async throws -> [String] {
        if try await redis.send("EXISTS", keys.hold(unit: id)).int == 1 { return [id] }
        return try await heldPurchases(limit: Int(Int32.max)).filter { $0.ticket == id }.map(\.unit)
    }

    /// Grants a held purchase once (or rejects it when Apple refunded it meanwhile).
    public func releaseHeld(
        unit: String, by operatorName: String, note: String = "", now: Int64 = currentTimeMs()
    ) async throws -> HeldPurchaseResult {
        try await run(ReleaseHeldPurchase(keys, unit: unit, by: operatorName, note: note, recheck: recheck, now: now), replicated: true)
    }

    /// Rejects a held purchase: it is never granted.
    public func rejectHeld(
        unit: String, by operatorName: String, note: String = "", now: Int64 = currentTimeMs()
    ) async throws -> HeldPurchaseResult {
        try await run(RejectHeldPurchase(keys, unit: unit, by: operatorName, note: note, now: now), replicated: true)
    }
}

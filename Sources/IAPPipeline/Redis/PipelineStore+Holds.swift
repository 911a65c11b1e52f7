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

    /// Grants a held purchase once (or rejects it when Apple refunded it meanwhile).
    public func releaseHeld(
        unit: String, by operatorName: String, note: String = "", now: Int64 = currentTimeMs()
    ) async throws -> HeldPurchaseResult {
        try await decideHeld(PipelineScripts.releaseHeldPurchase, unit: unit, by: operatorName, note: note, now: now)
    }

    /// Rejects a held purchase: it is never granted.
    public func rejectHeld(
        unit: String, by operatorName: String, note: String = "", now: Int64 = currentTimeMs()
    ) async throws -> HeldPurchaseResult {
        try await decideHeld(PipelineScripts.rejectHeldPurchase, unit: unit, by: operatorName, note: note, now: now)
    }

    private func decideHeld(
        _ script: RedisScript, unit: String, by operatorName: String, note: String, now: Int64
    ) async throws -> HeldPurchaseResult {
        let arguments = HeldPurchaseDecisionArguments(
            now: String(now), operatorName: operatorName, note: note, channel: keys.results, prefix: keys.scriptPrefix, recheck: recheck)
        let reply = try await redis.run(
            script,
            keys: [
                keys.hold(unit: unit), keys.holds, keys.claim(unit: unit), keys.grant(unit: unit), keys.refunded(unit: unit),
                keys.fulfilment,
            ],
            arguments: [arguments.argument], replicated: replication)
        let items = reply.array ?? []
        switch (items.first?.int, items.count > 1 ? items[1].string : nil) {
        case (1, let decision?): return .decided(decision)
        case (0, let status?): return .alreadyDecided(status)
        case (-1, _): return .notFound
        default: throw RedisError.unexpectedReply("\(script.name): \(reply)")
        }
    }
}

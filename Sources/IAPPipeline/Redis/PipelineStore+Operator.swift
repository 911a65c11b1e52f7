import RedisClient

extension PipelineStore {
    /// The grant unit of a grant an operator made by hand under `id`.
    public static func operatorUnit(id: String) -> String { "operator:\(id)" }

    /// Grants `product` to `user` by hand, once per `id`; returns `nil` when granted now, else the
    /// user that id was granted to before.
    public func grantByOperator(
        id: String, user: String, product: String, quantity: Int, by operatorName: String, note: String, now: Int64 = currentTimeMs()
    ) async throws -> String? {
        let unit = Self.operatorUnit(id: id)
        let arguments = OperatorGrantArguments(
            now: String(now), operatorName: operatorName, note: note, unit: unit, id: id, userID: user, productID: product,
            quantity: String(quantity))
        let reply = try await redis.run(
            PipelineScripts.grantByOperator, keys: [keys.claim(unit: unit), keys.grant(unit: unit), keys.fulfilment],
            arguments: [arguments.argument], replicated: replication)
        let items = reply.array ?? []
        guard let moved = items.first?.int else { throw RedisError.unexpectedReply("grant_by_operator: \(reply)") }
        return moved == 1 ? nil : items.count > 1 ? items[1].string ?? "" : ""
    }

    /// Revokes the grant of `unit` by hand: `revoked`, `already_revoked`, or `nil` when nothing is granted under it.
    public func revokeByOperator(unit: String, by operatorName: String, note: String, now: Int64 = currentTimeMs()) async throws -> String? {
        let arguments = OperatorGrantArguments(now: String(now), operatorName: operatorName, note: note)
        let reply = try await redis.run(
            PipelineScripts.revokeByOperator, keys: [keys.grant(unit: unit), keys.fulfilment], arguments: [arguments.argument],
            replicated: replication)
        let items = reply.array ?? []
        return items.count > 1 ? items[1].string : nil
    }
}

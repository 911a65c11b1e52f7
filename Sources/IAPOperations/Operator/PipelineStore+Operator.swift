import PipelineCore
import RedisClient

extension PipelineStore {
    /// The grant unit of a grant an operator made by hand under `id`.
    package static func operatorUnit(id: String) -> String { "operator:\(id)" }

    /// Grants `product` to `user` by hand, once per `id`; returns `nil` when granted now, else the
    /// user that id was granted to before.
    package func grantByOperator(
        id: String, user: String, product: String, quantity: Int, by operatorName: String, note: String, now: Int64 = currentTimeMs()
    ) async throws -> String? {
        try await run(
            GrantByOperator(keys, id: id, user: user, product: product, quantity: quantity, by: operatorName, note: note, now: now),
            replicated: true)
    }

    /// Revokes the grant of `unit` by hand: `revoked`, `already_revoked`, or `nil` when nothing is granted under it.
    package func revokeByOperator(unit: String, by operatorName: String, note: String, now: Int64 = currentTimeMs()) async throws -> String? {
        guard let original = try await originalTransactionID(ofUnit: unit) else { return nil }
        return try await run(
            RevokeByOperator(keys, unit: unit, originalTransactionID: original, by: operatorName, note: note, now: now), replicated: true)
    }
}

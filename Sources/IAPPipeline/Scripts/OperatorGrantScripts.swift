import PlainJSON
import RedisClient

extension PipelineScripts {
    /// An operator grants something by hand (a lost order found by support, a compensation): once
    /// per operator id (the claim `txn:operator:<id>`), with a grant record and one `granted` entry
    /// on the fulfilment stream, `source=operator`, `operator`, `note`.
    /// KEYS: claim key, grant key, fulfilment stream. ARGV[1]: `OperatorGrantArguments` as JSON.
    /// Returns `{1, "granted"}`, or `{0, user}` when that id was granted before (to `user`).
    static let grantByOperator = RedisScript(name: "grant_by_operator", source: """
        local a = cjson.decode(ARGV[1])
        if not redis.call('SET', KEYS[1], 'operator', 'NX') then
          return {0, redis.call('HGET', KEYS[2], 'user_id') or ''}
        end
        redis.call('HSET', KEYS[2], 'ticket', 'operator', 'user_id', a.user_id, 'product_id', a.product_id,
          'quantity', a.quantity, 'transaction_id', a.id, 'original_transaction_id', a.id, 'environment', 'Operator',
          'unit', a.unit, 'granted_at', a.now, 'source', 'operator', 'granted_by', a.operator, 'note', a.note)
        redis.call('XADD', KEYS[3], '*', 'event', 'granted', 'source', 'operator', 'operator', a.operator, 'note', a.note,
          'ticket', 'operator', 'user_id', a.user_id, 'product_id', a.product_id, 'quantity', a.quantity,
          'transaction_id', a.id, 'original_transaction_id', a.id, 'environment', 'Operator', 'unit', a.unit,
          'granted_at', a.now)
        return {1, 'granted'}
        """)

    /// An operator takes a grant back by hand: once (`revoked_at`, `revocation_reason` `operator`,
    /// `revoked_by`, `note` on the record; one `revoked` entry, `source=operator`). Not a refund:
    /// the user's refund count does not move.
    /// KEYS: grant key, fulfilment stream. ARGV[1]: `OperatorGrantArguments` as JSON (`operator`, `note`, `now`).
    /// Returns `{1, "revoked"}`, `{0, "already_revoked"}`, `{-1}` when nothing is granted under that unit.
    static let revokeByOperator = RedisScript(name: "revoke_by_operator", source: """
        local a = cjson.decode(ARGV[1])
        if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
        if redis.call('HEXISTS', KEYS[1], 'revoked_at') == 1 then return {0, 'already_revoked'} end
        redis.call('HSET', KEYS[1], 'revoked_at', a.now, 'revocation_reason', 'operator', 'revoked_by', a.operator, 'note', a.note)
        redis.call('HDEL', KEYS[1], 'reinstated_at')
        local g = redis.call('HMGET', KEYS[1], 'ticket', 'user_id', 'product_id', 'quantity', 'transaction_id',
          'original_transaction_id', 'environment', 'unit', 'granted_at')
        redis.call('XADD', KEYS[2], '*', 'event', 'revoked', 'source', 'operator', 'operator', a.operator, 'note', a.note,
          'ticket', g[1], 'user_id', g[2], 'product_id', g[3], 'quantity', g[4], 'transaction_id', g[5],
          'original_transaction_id', g[6], 'environment', g[7], 'unit', g[8], 'granted_at', g[9], 'revoked_at', a.now,
          'revocation_reason', 'operator')
        return {1, 'revoked'}
        """)
}

/// The named arguments of `grant_by_operator` and `revoke_by_operator`.
struct OperatorGrantArguments: ScriptArguments {
    var now: String
    var operatorName: String
    var note: String
    var unit: String = ""
    var id: String = ""
    var userID: String = ""
    var productID: String = ""
    var quantity: String = "1"

    var json: JSONValue {
        .object([
            "now": .string(now), "operator": .string(operatorName), "note": .string(note), "unit": .string(unit), "id": .string(id),
            "user_id": .string(userID), "product_id": .string(productID), "quantity": .string(quantity),
        ])
    }
}

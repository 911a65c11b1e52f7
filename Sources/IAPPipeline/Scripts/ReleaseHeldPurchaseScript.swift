import RedisClient

extension PipelineScripts {
    /// An operator releases a held purchase: it is granted once, as the grant stage would have
    /// granted it (grant record, `GrantEffects`, one `released` entry on the fulfilment stream with
    /// `source=operator`), the hold records the decision and leaves the index, and the ticket
    /// shows the purchase granted. A purchase Apple refunded while it was held is rejected as
    /// `refunded` instead: nothing refunded is ever granted.
    /// KEYS: hold, holds index, claim key, grant key, refund marker, fulfilment stream.
    /// ARGV[1]: `HeldPurchaseDecisionArguments` as JSON.
    /// Returns `{1, "released" | "rejected"}`, `{0, status}` when decided already, `{-1}` when no such hold.
    static let releaseHeldPurchase = RedisScript(
        name: "release_held_purchase", source: GrantEffects.lua + HeldPurchaseDecision.readHold + "\n" + """
        \(HeldPurchaseDecision.settle)
        if redis.call('EXISTS', KEYS[5]) == 1 then
          redis.call('DEL', KEYS[3])
          redis.call('XADD', KEYS[6], '*', 'event', 'rejected', 'source', 'operator', 'operator', a.operator,
            \(HeldPurchaseDecision.entryFields), 'reason', 'refunded', 'rejected_at', a.now)
          return {1, settle('rejected', 'refunded')}
        end
        if redis.call('GET', KEYS[3]) ~= h.ticket or redis.call('EXISTS', KEYS[4]) == 1 then
          return {0, 'claimed_elsewhere'}
        end
        redis.call('HSET', KEYS[4], 'ticket', h.ticket, 'user_id', h.user_id, 'product_id', h.product_id,
          'quantity', h.quantity, 'transaction_id', h.transaction_id, 'original_transaction_id', h.original_transaction_id,
          'environment', h.environment, 'unit', h.unit, 'granted_at', a.now, 'source', h.source,
          'released_by', a.operator)
        redis.call('XADD', KEYS[6], '*', 'event', 'released', 'source', 'operator', 'operator', a.operator,
          \(HeldPurchaseDecision.entryFields), 'granted_at', a.now)
        h.source = 'operator'
        grantEffects(p, h, a.now, KEYS[6])
        return {1, settle('granted', h.reason)}
        """)
}

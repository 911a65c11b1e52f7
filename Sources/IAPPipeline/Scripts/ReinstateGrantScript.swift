import RedisClient

extension PipelineScripts {
    /// Notify stage, REFUND_REVERSED: undo a revocation once (one `reinstated` entry on the
    /// fulfilment stream, one refund fewer in the owner's `refunds:<user>`), or forget a refund remembered before the grant; finish the ticket; ack.
    /// KEYS: in-flight list, ticket key, grant key, refund marker, fulfilment stream.
    /// ARGV[1]: the job as taken; ARGV[2]: JSON `{"ticket", "now", "channel", "notification", "prefix",
    ///   "subscription"?}`: for a subscription's period, the record's status as the transaction now says.
    /// Returns `{1, result}` (`reinstated`, `refund_forgotten`, `not_revoked`), `{0}` lease lost, `{-1}` no ticket.
    static let reinstateGrant = RedisScript(name: "reinstate_grant", source: GrantEffects.lua + """
        if redis.call('EXISTS', KEYS[2]) == 0 then return {-1} end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return {0} end
        local a = cjson.decode(ARGV[2])
        recheckPolicy = a.recheck
        local result = 'not_revoked'
        if redis.call('HEXISTS', KEYS[3], 'revoked_at') == 1 then
          redis.call('HDEL', KEYS[3], 'revoked_at', 'revocation_reason', 'revocation_type')
          redis.call('HSET', KEYS[3], 'reinstated_at', a.now)
          local g = redis.call('HMGET', KEYS[3], 'ticket', 'user_id', 'product_id', 'quantity', 'transaction_id',
            'original_transaction_id', 'environment', 'unit', 'granted_at')
          redis.call('XADD', KEYS[5], '*', 'event', 'reinstated', 'source', 'notification', 'ticket', g[1],
            'user_id', g[2], 'product_id', g[3], 'quantity', g[4], 'transaction_id', g[5],
            'original_transaction_id', g[6], 'environment', g[7], 'unit', g[8], 'granted_at', g[9],
            'reinstated_at', a.now, 'notification', a.notification)
          local refunds = a.prefix .. 'refunds:' .. g[2]
          if tonumber(redis.call('GET', refunds) or '0') > 0 then redis.call('DECR', refunds) end
          if a.subscription then
            a.subscription.user_id = g[2]
            applySubscription(a.prefix, a.subscription, a.now, KEYS[5])
          end
          result = 'reinstated'
        elseif redis.call('DEL', KEYS[4]) == 1 then
          result = 'refund_forgotten'
        end
        redis.call('HSET', KEYS[2], 'status', 'applied', 'result', result, 'attempts', '1', 'updated_at', a.now)
        redis.call('PUBLISH', a.channel, a.ticket)
        return {1, result}
        """)
}

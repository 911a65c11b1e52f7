import RedisClient

extension PipelineScripts {
    /// Notify stage, REFUND or REVOKE: revoke the unit's grant once (record gets `revoked_at`,
    /// `revocation_reason`, `revocation_type`; one `revoked` entry on the fulfilment stream for the
    /// owner, whose count of refunds, `refunds:<user>`, goes up by one), or, when nothing is
    /// granted yet, remember the refund so the grant stage grants nothing; finish the
    /// notification's ticket; ack.
    /// KEYS: in-flight list, ticket key, grant key, refund marker, fulfilment stream.
    /// ARGV[1]: the job as taken; ARGV[2]: JSON `{"ticket", "now", "channel", "notification",
    ///   "revocation_reason", "revocation_type", "prefix", "subscription"?}`: for a subscription's
    ///   period, the record becomes `revoked` (`applySubscription`, only when it is the latest period).
    /// Returns `{1, result}` (`revoked`, `already_revoked`, `refund_remembered`), `{0}` lease lost, `{-1}` no ticket.
    static let revokeGrant = RedisScript(name: "revoke_grant", source: GrantEffects.lua + """
        if redis.call('EXISTS', KEYS[2]) == 0 then return {-1} end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return {0} end
        local a = cjson.decode(ARGV[2])
        recheckPolicy = a.recheck
        local result
        if redis.call('EXISTS', KEYS[3]) == 1 then
          if redis.call('HEXISTS', KEYS[3], 'revoked_at') == 1 then
            result = 'already_revoked'
          else
            redis.call('HSET', KEYS[3], 'revoked_at', a.now, 'revocation_reason', a.revocation_reason,
              'revocation_type', a.revocation_type)
            redis.call('HDEL', KEYS[3], 'reinstated_at')
            local g = redis.call('HMGET', KEYS[3], 'ticket', 'user_id', 'product_id', 'quantity', 'transaction_id',
              'original_transaction_id', 'environment', 'unit', 'granted_at')
            redis.call('XADD', KEYS[5], '*', 'event', 'revoked', 'source', 'notification', 'ticket', g[1],
              'user_id', g[2], 'product_id', g[3], 'quantity', g[4], 'transaction_id', g[5],
              'original_transaction_id', g[6], 'environment', g[7], 'unit', g[8], 'granted_at', g[9],
              'revoked_at', a.now, 'revocation_reason', a.revocation_reason, 'revocation_type', a.revocation_type,
              'notification', a.notification)
            redis.call('INCR', a.prefix .. 'refunds:' .. g[2])
            if a.subscription then
              a.subscription.user_id = g[2]
              applySubscription(a.prefix, a.subscription, a.now, KEYS[5])
            end
            result = 'revoked'
          end
        else
          redis.call('SET', KEYS[4], a.now)
          result = 'refund_remembered'
        end
        redis.call('HSET', KEYS[2], 'status', 'applied', 'result', result, 'attempts', '1', 'updated_at', a.now)
        redis.call('PUBLISH', a.channel, a.ticket)
        return {1, result}
        """)
}

import RedisClient

extension PipelineScripts {
    /// Intake: store a new ticket and queue its job, unless this user sent this receipt before
    /// (free: a resubmission counts against no rate limit) or a rate limit is spent this second.
    /// KEYS: receipt digest key, new ticket key, verify queue, this second's window of the client
    /// key, this second's window of the user.
    /// ARGV: ticket, job, now, ttl seconds, user id, product id, transaction id, prefix, channel,
    /// limit per key, limit per user (0: none).
    /// Returns `{1, ticket}` when queued, `{0, existing ticket}` for a resubmission, `{-1, 'key'}`
    /// or `{-1, 'user'}` when that limit is spent.
    static let submitReceipt = RedisScript(name: "submit_receipt", source: """
        local existing = redis.call('GET', KEYS[1])
        if existing and redis.call('EXISTS', ARGV[8] .. 'ticket:' .. existing) == 1 then
          return {0, existing}
        end
        local function spent(window, limit)
          if limit == 0 then return false end
          local count = redis.call('INCR', window)
          if count == 1 then redis.call('EXPIRE', window, 2) end
          return count > limit
        end
        if spent(KEYS[4], tonumber(ARGV[10])) then return {-1, 'key'} end
        if spent(KEYS[5], tonumber(ARGV[11])) then return {-1, 'user'} end
        redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
        redis.call('HSET', KEYS[2], 'status', 'queued', 'attempts', '0', 'user_id', ARGV[5],
          'created_at', ARGV[3], 'updated_at', ARGV[3])
        if ARGV[6] ~= '' then redis.call('HSET', KEYS[2], 'product_id', ARGV[6]) end
        if ARGV[7] ~= '' then redis.call('HSET', KEYS[2], 'transaction_id', ARGV[7]) end
        redis.call('EXPIRE', KEYS[2], ARGV[4])
        redis.call('LPUSH', KEYS[3], ARGV[2])
        redis.call('PUBLISH', ARGV[9], ARGV[1])
        return {1, ARGV[1]}
        """)
}

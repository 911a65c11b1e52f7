import RedisClient

extension PipelineScripts {
    /// Intake: store a new ticket and queue its job, unless this user sent this receipt before.
    /// KEYS: receipt digest key, new ticket key, verify queue.
    /// ARGV: ticket, job, now, ttl seconds, user id, product id, transaction id, prefix, channel.
    /// Returns `{1, ticket}` when queued, `{0, existing ticket}` for a resubmission.
    static let submitReceipt = RedisScript(name: "submit_receipt", source: """
        local existing = redis.call('GET', KEYS[1])
        if existing and redis.call('EXISTS', ARGV[8] .. 'ticket:' .. existing) == 1 then
          return {0, existing}
        end
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

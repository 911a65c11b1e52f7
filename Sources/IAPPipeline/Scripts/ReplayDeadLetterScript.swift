import RedisClient

extension PipelineScripts {
    /// Take one dead letter and queue its job again with attempts reset; only the caller that
    /// removes the entry queues it, so concurrent replays cannot queue it twice.
    /// KEYS: dead list, queue, ticket key. ARGV: dead entry, job, now, channel, ticket, ttl seconds.
    /// Returns 1 when replayed, 0 when the entry is no longer there.
    static let replayDeadLetter = RedisScript(name: "replay_dead_letter", source: """
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
        redis.call('LPUSH', KEYS[2], ARGV[2])
        redis.call('HSET', KEYS[3], 'status', 'queued', 'attempts', '0', 'redeliveries', '0', 'updated_at', ARGV[3])
        redis.call('HDEL', KEYS[3], 'reason', 'last_error')
        if redis.call('TTL', KEYS[3]) < 0 then redis.call('EXPIRE', KEYS[3], ARGV[6]) end
        redis.call('PUBLISH', ARGV[4], ARGV[5])
        return 1
        """)
}

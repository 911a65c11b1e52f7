import RedisClient

extension PipelineScripts {
    /// Ack a job and park it in the retry set until it is due; the ticket shows `retrying`.
    /// KEYS: in-flight list, retry zset, ticket key.
    /// ARGV: job as taken, job for the next attempt, due (ms), now, attempts, last error, channel, ticket.
    /// Returns 1, 0 when the worker no longer holds the job, -1 when the ticket is gone.
    static let scheduleRetry = RedisScript(name: "schedule_retry", source: """
        if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
        redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
        redis.call('HSET', KEYS[3], 'status', 'retrying', 'attempts', ARGV[5], 'last_error', ARGV[6],
          'updated_at', ARGV[4])
        redis.call('PUBLISH', ARGV[7], ARGV[8])
        return 1
        """)
}

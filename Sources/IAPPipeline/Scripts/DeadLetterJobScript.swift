import RedisClient

extension PipelineScripts {
    /// Ack a job and move it to the dead letters; the ticket (if it still exists) shows `dead`.
    /// KEYS: in-flight list, dead list, ticket key.
    /// ARGV: job as taken, dead-letter entry, reason, attempts, now, channel, ticket, last error.
    /// Returns 1, or 0 when the worker no longer holds the job.
    static let deadLetterJob = RedisScript(name: "dead_letter_job", source: """
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
        redis.call('LPUSH', KEYS[2], ARGV[2])
        if redis.call('EXISTS', KEYS[3]) == 1 then
          redis.call('HSET', KEYS[3], 'status', 'dead', 'reason', ARGV[3], 'attempts', ARGV[4],
            'last_error', ARGV[8], 'updated_at', ARGV[5])
          redis.call('PUBLISH', ARGV[6], ARGV[7])
        end
        return 1
        """)
}

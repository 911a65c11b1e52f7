import RedisClient

extension PipelineScripts {
    /// Ack a job and give its ticket a terminal status without granting (a rejection).
    /// KEYS: in-flight list, ticket key.
    /// ARGV: job as taken, status, reason, attempts, now, channel, ticket, environment, transactions JSON.
    /// Returns 1, 0 when the worker no longer holds the job, -1 when the ticket is gone.
    static let finishTicket = RedisScript(name: "finish_ticket", source: """
        if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
        redis.call('HSET', KEYS[2], 'status', ARGV[2], 'reason', ARGV[3], 'attempts', ARGV[4],
          'transactions', ARGV[9], 'updated_at', ARGV[5])
        if ARGV[8] ~= '' then redis.call('HSET', KEYS[2], 'environment', ARGV[8]) end
        redis.call('PUBLISH', ARGV[6], ARGV[7])
        return 1
        """)
}

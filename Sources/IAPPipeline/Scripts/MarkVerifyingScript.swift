import RedisClient

extension PipelineScripts {
    /// Verify stage, on taking a job: show `verifying` on a ticket that is queued or retrying.
    /// KEYS: ticket key. ARGV: now, channel, ticket.
    /// Returns 1, or -1 when the ticket hash is gone.
    static let markVerifying = RedisScript(name: "mark_verifying", source: """
        local status = redis.call('HGET', KEYS[1], 'status')
        if not status then return -1 end
        if status == 'queued' or status == 'retrying' then
          redis.call('HSET', KEYS[1], 'status', 'verifying', 'updated_at', ARGV[1])
          redis.call('PUBLISH', ARGV[2], ARGV[3])
        end
        return 1
        """)
}

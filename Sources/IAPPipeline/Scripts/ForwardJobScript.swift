import RedisClient

extension PipelineScripts {
    /// Ack a job from the worker's in-flight list and push its next form onto the next stage's queue.
    /// KEYS: in-flight list, next queue, ticket key.
    /// ARGV: job as taken, job for the next stage, then field/value pairs to set on the ticket.
    /// Returns 1 when moved, 0 when the worker no longer holds the job, -1 when the ticket is gone.
    static let forwardJob = RedisScript(name: "forward_job", source: """
        if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
        redis.call('LPUSH', KEYS[2], ARGV[2])
        if #ARGV > 2 then redis.call('HSET', KEYS[3], unpack(ARGV, 3)) end
        return 1
        """)
}

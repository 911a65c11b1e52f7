import RedisClient

extension PipelineScripts {
    /// A worker stopping gracefully hands its unfinished jobs back to the front of its queue and
    /// leaves the worker set. KEYS: in-flight list, queue, workers zset. ARGV: worker member.
    /// Returns how many jobs went back.
    static let requeueInflight = RedisScript(name: "requeue_inflight", source: """
        local moved = 0
        while true do
          local payload = redis.call('LPOP', KEYS[1])
          if not payload then break end
          redis.call('RPUSH', KEYS[2], payload)
          moved = moved + 1
        end
        redis.call('ZREM', KEYS[3], ARGV[1])
        return moved
        """)
}

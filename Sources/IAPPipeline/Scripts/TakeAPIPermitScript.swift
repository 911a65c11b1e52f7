import RedisClient

extension PipelineScripts {
    /// Takes one App Store Server API call from the fleet's budget: at most `limit` calls in any
    /// `window_ms`, none while Apple's Retry-After holds the endpoint. Time is Redis's own (TIME),
    /// so every process counts on one clock.
    /// KEYS: permits zset, hold key. ARGV[1]: JSON `{"limit", "window_ms", "call"}` (`call`: a unique id).
    /// Returns 0 when granted, else the milliseconds to wait before asking again.
    static let takeAPIPermit = RedisScript(name: "take_api_permit", source: """
        local a = cjson.decode(ARGV[1])
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local hold = tonumber(redis.call('GET', KEYS[2]) or '0')
        if hold > now then return hold - now end
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - a.window_ms)
        if redis.call('ZCARD', KEYS[1]) < a.limit then
          redis.call('ZADD', KEYS[1], now, a.call)
          redis.call('PEXPIRE', KEYS[1], a.window_ms * 2)
          return 0
        end
        local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
        return math.max(tonumber(oldest[2]) + a.window_ms - now, 1)
        """)
}

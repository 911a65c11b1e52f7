import RedisClient

extension PipelineScripts {
    /// Holds an endpoint for the whole fleet until `until_ms` (Apple's Retry-After), unless a
    /// later hold is already set. KEYS: hold key. ARGV[1]: JSON `{"until_ms"}`.
    /// Returns the hold in force (ms).
    static let holdAPIEndpoint = RedisScript(name: "hold_api_endpoint", source: """
        local a = cjson.decode(ARGV[1])
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local current = tonumber(redis.call('GET', KEYS[1]) or '0')
        local wanted = tonumber(a.until_ms)
        if wanted > current and wanted > now then
          redis.call('SET', KEYS[1], tostring(wanted), 'PX', wanted - now)
          return wanted
        end
        return current
        """)
}

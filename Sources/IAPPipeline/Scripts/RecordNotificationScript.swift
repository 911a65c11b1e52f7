import RedisClient

extension PipelineScripts {
    /// Notify stage, a notification that grants nothing now: keep it (on the original transaction's
    /// list, newest first, at most `keep`; or, for a purchase whose account is unknown, in the
    /// unclaimed hash until a user submits it), finish the ticket with `result`; ack.
    /// KEYS: in-flight list, ticket key, then the list or hash to keep it in (none: only finish).
    /// ARGV[1]: the job as taken; ARGV[2]: JSON `{"ticket", "now", "channel", "result", "entry",
    ///   "keep", "transaction_id"}` (`transaction_id`: the unclaimed hash's field).
    /// Returns 1, 0 when the worker no longer holds the job, -1 when the ticket is gone.
    static let recordNotification = RedisScript(name: "record_notification", source: """
        if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
        local a = cjson.decode(ARGV[2])
        if KEYS[3] then
          if a.transaction_id then
            redis.call('HSET', KEYS[3], a.transaction_id, a.entry)
          else
            redis.call('LPUSH', KEYS[3], a.entry)
            redis.call('LTRIM', KEYS[3], 0, tonumber(a.keep) - 1)
          end
        end
        redis.call('HSET', KEYS[2], 'status', 'applied', 'result', a.result, 'attempts', '1', 'updated_at', a.now)
        redis.call('PUBLISH', a.channel, a.ticket)
        return 1
        """)
}

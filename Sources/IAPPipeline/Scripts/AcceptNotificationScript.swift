import RedisClient

extension PipelineScripts {
    /// Intake: store a verified Server Notification and queue it for the notify stage, unless its
    /// UUID was seen before (Apple delivers the same notification again until it gets a 2xx).
    /// KEYS: notification key, new ticket key, notify queue.
    /// ARGV[1]: the job; ARGV[2]: JSON `{"ticket", "now", "ttl", "retention", "channel", "type"}`.
    /// Returns `{1, ticket}` when queued, `{0, existing ticket}` for a notification seen before.
    static let acceptNotification = RedisScript(name: "accept_notification", source: """
        local a = cjson.decode(ARGV[2])
        local existing = redis.call('GET', KEYS[1])
        if existing then return {0, existing} end
        redis.call('SET', KEYS[1], a.ticket, 'EX', a.retention)
        redis.call('HSET', KEYS[2], 'status', 'queued', 'attempts', '0', 'user_id', '', 'kind', 'notification',
          'notification_type', a.type, 'created_at', a.now, 'updated_at', a.now)
        redis.call('EXPIRE', KEYS[2], a.ttl)
        redis.call('LPUSH', KEYS[3], ARGV[1])
        redis.call('PUBLISH', a.channel, a.ticket)
        return {1, a.ticket}
        """)
}

import PlainJSON
import RedisClient

extension PipelineScripts {
    /// `iap-webhook`'s housekeeping: reads the next fulfilment entries for the consumer group
    /// (`XREADGROUP`, created at the stream's start the first time), appends each to its user's
    /// list of events to deliver, queues a delivery job for a user who has none (one job per
    /// user, with its ticket `webhook:<user>`), and acknowledges the entries (`XACK`) — all in this
    /// one step, so a crash can neither lose an entry nor leave one pending (nothing is ever left
    /// for `XAUTOCLAIM` to claim). An entry without a user goes to the user `_`.
    /// KEYS: fulfilment stream, webhook queue, busy set. ARGV[1]: `RouteFulfilmentArguments` as JSON.
    /// Returns how many entries were routed.
    static let routeFulfilmentEvents = RedisScript(name: "route_fulfilment_events", source: """
        local a = cjson.decode(ARGV[1])
        local p, now = a.prefix, a.now
        local ok, read = pcall(redis.call, 'XREADGROUP', 'GROUP', a.group, a.consumer, 'COUNT', tonumber(a.count),
          'STREAMS', KEYS[1], '>')
        if not ok then
          -- No group yet: create it at the stream's start (every event is delivered), then read.
          redis.call('XGROUP', 'CREATE', KEYS[1], a.group, '0', 'MKSTREAM')
          read = redis.call('XREADGROUP', 'GROUP', a.group, a.consumer, 'COUNT', tonumber(a.count), 'STREAMS', KEYS[1], '>')
        end
        if not read then return 0 end
        local routed = 0
        for _, stream in ipairs(read) do
          for _, entry in ipairs(stream[2]) do
            local id, list = entry[1], entry[2]
            local fields = {}
            for i = 1, #list, 2 do fields[list[i]] = list[i + 1] end
            local user = fields.user_id
            if not user or user == '' then user = '_' end
            redis.call('RPUSH', p .. 'webhook:events:' .. user, cjson.encode({id = id, fields = fields}))
            if redis.call('SADD', KEYS[3], user) == 1 then
              local ticket = 'webhook:' .. user
              redis.call('HSET', p .. 'ticket:' .. ticket, 'status', 'queued', 'attempts', '0', 'user_id', user,
                'source', 'webhook', 'created_at', now, 'updated_at', now)
              redis.call('EXPIRE', p .. 'ticket:' .. ticket, tonumber(a.ttl))
              redis.call('LPUSH', KEYS[2], cjson.encode({ticket = ticket, stage = 'webhook', user_id = user, attempts = 0,
                enqueued_at = tonumber(now)}))
            end
            redis.call('XACK', KEYS[1], a.group, id)
            routed = routed + 1
          end
        end
        return routed
        """)

    /// A webhook delivery ended for the event at the head of the user's list (delivered, or too old
    /// and dead-lettered with `dead_entry`): removes it (unless an earlier run of this job did),
    /// then queues the user's job again at the back of the queue (other users' turns come first)
    /// while events remain, else lets the user go (`busy`) and deletes the ticket. A replayed
    /// event (`replay`) touches no list: its ticket is deleted.
    /// KEYS: in-flight list, the user's events, busy set, webhook queue, ticket key, dead list.
    /// ARGV[1]: the job as taken; ARGV[2]: `WebhookDoneArguments` as JSON.
    /// Returns 1, 0 when the worker no longer holds the job, -1 when its ticket is gone (a job
    /// nobody queued: dead-lettered as `ticket_missing`, like any stage's).
    static let finishWebhookEvent = RedisScript(name: "finish_webhook_event", source: """
        if redis.call('EXISTS', KEYS[5]) == 0 then return -1 end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
        local a = cjson.decode(ARGV[2])
        if a.dead_entry then redis.call('LPUSH', KEYS[6], a.dead_entry) end
        if a.replay then
          redis.call('DEL', KEYS[5])
          return 1
        end
        local head = redis.call('LINDEX', KEYS[2], 0)
        if head and a.event_id ~= '' and cjson.decode(head).id == a.event_id then redis.call('LPOP', KEYS[2]) end
        if redis.call('LLEN', KEYS[2]) > 0 then
          redis.call('LPUSH', KEYS[4], a.next)
          redis.call('HSET', KEYS[5], 'status', 'queued', 'attempts', '0', 'updated_at', a.now)
          redis.call('HDEL', KEYS[5], 'last_error')
          redis.call('EXPIRE', KEYS[5], tonumber(a.ttl))
        else
          redis.call('SREM', KEYS[3], a.user)
          redis.call('DEL', KEYS[5])
        end
        return 1
        """)
}

/// The named arguments of `route_fulfilment_events`.
struct RouteFulfilmentArguments: ScriptArguments {
    var prefix: String
    var group: String
    var consumer: String
    var count: String
    var now: String
    /// The delivery tickets' time to live (seconds).
    var ttl: String

    var json: JSONValue {
        .members([
            "prefix": .string(prefix), "group": .string(group), "consumer": .string(consumer), "count": .string(count),
            "now": .string(now), "ttl": .string(ttl),
        ])
    }
}

/// The named arguments of `finish_webhook_event`.
struct WebhookDoneArguments: ScriptArguments {
    var user: String
    /// The stream entry id delivered (or dead-lettered); empty: nothing was at the head.
    var eventID: String
    /// The user's job for their next event.
    var next: String
    var now: String
    var replay: Bool
    /// The dead letter of an event too old to deliver.
    var deadEntry: String?
    /// The ticket's time to live again while the user's job goes on (seconds).
    var ttl: String

    var json: JSONValue {
        .members([
            "user": .string(user), "event_id": .string(eventID), "next": .string(next), "now": .string(now),
            "replay": replay ? .bool(true) : nil, "dead_entry": deadEntry.json, "ttl": .string(ttl),
        ])
    }
}

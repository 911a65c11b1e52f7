import PlainJSON
import RedisClient

extension PipelineScripts {
    /// Verify stage, on taking jobs: show `verifying` on each ticket that is queued or retrying.
    /// KEYS: the tickets' keys. ARGV[1]: `MarkVerifyingArguments` as JSON (`now`, `channel`,
    /// `tickets`: the ticket ids, in the order of KEYS, for the announcements).
    /// Returns, per ticket, 1, or -1 when its hash is gone.
    static let markVerifying = RedisScript(name: "mark_verifying", source: """
        local a = cjson.decode(ARGV[1])
        local found = {}
        for i, key in ipairs(KEYS) do
          local status = redis.call('HGET', key, 'status')
          if not status then
            found[i] = -1
          else
            found[i] = 1
            if status == 'queued' or status == 'retrying' then
              redis.call('HSET', key, 'status', 'verifying', 'updated_at', a.now)
              redis.call('PUBLISH', a.channel, a.tickets[i])
            end
          end
        end
        return found
        """)
}

/// The named arguments of `mark_verifying`.
struct MarkVerifyingArguments: ScriptArguments {
    var now: String
    var channel: String
    var tickets: [String]

    var json: JSONValue {
        .object(["now": .string(now), "channel": .string(channel), "tickets": .array(tickets.map(JSONValue.string))])
    }
}

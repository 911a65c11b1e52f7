import PlainJSON
import RedisClient

extension PipelineScripts {
    /// Ack a job and give its ticket a terminal status without granting (a rejection).
    /// KEYS: in-flight list, ticket key.
    /// ARGV[1]: the job as taken; ARGV[2]: `FinishTicketArguments` as JSON
    /// (`status`, `reason`, `attempts`, `now`, `channel`, `ticket`, `environment`?, `last_error`?).
    /// Returns 1, 0 when the worker no longer holds the job, -1 when the ticket is gone.
    static let finishTicket = RedisScript(name: "finish_ticket", source: """
        if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
        local a = cjson.decode(ARGV[2])
        redis.call('HSET', KEYS[2], 'status', a.status, 'reason', a.reason, 'attempts', a.attempts,
          'transactions', '[]', 'updated_at', a.now)
        if a.environment then redis.call('HSET', KEYS[2], 'environment', a.environment) end
        if a.last_error then redis.call('HSET', KEYS[2], 'last_error', a.last_error)
        else redis.call('HDEL', KEYS[2], 'last_error') end
        redis.call('PUBLISH', a.channel, a.ticket)
        return 1
        """)
}

/// The named arguments of `finish_ticket`.
struct FinishTicketArguments: ScriptArguments {
    var status: String
    var reason: String
    /// Numbers travel as strings: cjson reads numbers as doubles.
    var attempts: String
    var now: String
    var channel: String
    var ticket: String
    var environment: String?
    var lastError: String?

    var json: JSONValue {
        .members([
            "status": .string(status), "reason": .string(reason), "attempts": .string(attempts), "now": .string(now),
            "channel": .string(channel), "ticket": .string(ticket), "environment": environment.json,
            "last_error": lastError.json,
        ])
    }
}

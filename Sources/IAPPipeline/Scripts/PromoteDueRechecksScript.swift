import PlainJSON
import RedisClient

extension PipelineScripts {
    /// Turns the subscriptions whose re-check is due into re-check jobs on the verify queue, at
    /// most `limit` a call (O(batch): the zset is read from its low end only). Each gets a ticket
    /// (`recheck-<original>-<now>-<try>`, status `queued`, source `recheck`) and a job crediting the
    /// subscription's owner; its try is counted on the record (`recheck_tries`) and its next due
    /// time set as if this try settles nothing (waits doubling from `after_ms`, at most
    /// `longest_ms`), so a re-check Apple cannot answer is asked again, never dropped. The step
    /// that applies Apple's answer reschedules it from the new state. A subscription without a
    /// record, revoked, or past its tries, leaves the zset.
    /// KEYS: re-check zset, verify queue. ARGV[1]: `PromoteDueRechecksArguments` as JSON.
    /// Returns how many jobs were queued.
    static let promoteDueRechecks = RedisScript(name: "promote_due_rechecks", source: """
        local a = cjson.decode(ARGV[1])
        local p, now, r = a.prefix, a.now, a.recheck
        local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(a.limit))
        local queued = 0
        for _, otx in ipairs(due) do
          local key = p .. 'subscription:' .. otx
          local s = redis.call('HMGET', key, 'user_id', 'status', 'environment', 'recheck_tries', 'latest_transaction_id', 'expires_at')
          local tries = tonumber(s[4] or '0') + 1
          if not s[1] or s[2] == 'revoked' or (tries > 2 + tonumber(r.max_tries) and s[2] ~= 'active') then
            redis.call('ZREM', KEYS[1], otx)
          else
            redis.call('HSET', key, 'recheck_tries', tries, 'rechecked_at', now)
            local ticket = 'recheck-' .. otx .. '-' .. now .. '-' .. tries
            local ticketKey = p .. 'ticket:' .. ticket
            redis.call('HSET', ticketKey, 'status', 'queued', 'attempts', '0', 'user_id', s[1], 'source', 'recheck',
              'original_transaction_id', otx, 'created_at', now, 'updated_at', now)
            redis.call('EXPIRE', ticketKey, tonumber(a.ttl))
            local environment = s[3]
            if not environment or environment == '' then environment = 'Production' end
            redis.call('LPUSH', KEYS[2], cjson.encode({ticket = ticket, stage = 'verify', user_id = s[1], source = 'recheck',
              recheck = {original_transaction_id = otx, environment = environment, latest_transaction_id = s[5] or '',
                expires_at = s[6] or ''}, attempts = 0,
              enqueued_at = tonumber(now)}))
            local wait = math.min(math.max(tonumber(r.after_ms), 1000) * 2 ^ (tries - 1), tonumber(r.longest_ms))
            redis.call('ZADD', KEYS[1], string.format('%.0f', tonumber(now) + wait), otx)
            queued = queued + 1
          end
        end
        return queued
        """)

    /// `iapctl recheck`: makes a subscription's re-check due now with its tries counted from zero
    /// (even one that left the schedule). KEYS: re-check zset, the subscription's record.
    /// ARGV: original transaction id, now. Returns 0 when no record exists.
    static let forceRecheck = RedisScript(name: "force_recheck", source: """
        if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
        redis.call('HDEL', KEYS[2], 'recheck_tries')
        redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
        return 1
        """)
}

/// The named arguments of `promote_due_rechecks`.
struct PromoteDueRechecksArguments: ScriptArguments {
    var prefix: String
    var now: String
    var limit: String
    /// The re-check tickets' time to live (seconds).
    var ttl: String
    var recheck: RecheckSchedule

    var json: JSONValue {
        .members([
            "prefix": .string(prefix), "now": .string(now), "limit": .string(limit), "ttl": .string(ttl),
            "recheck": recheck.json,
        ])
    }
}

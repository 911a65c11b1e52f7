import RedisClient

extension PipelineScripts {
    /// Return the in-flight jobs of workers whose heartbeat is older than the lease to the front of
    /// their queue, counting each redelivery on the ticket; a job redelivered too often is
    /// dead-lettered as poison. One worker at a time runs it, under a short lock (its holder may run it again).
    /// A silent worker stays in the set, reaped every round, until it has been silent for `forget ms`:
    /// a BLMOVE it sent before going silent can still deliver a job into its list after the first round.
    /// KEYS: workers zset, dead list, reaper lock.
    /// ARGV: prefix, now, lease ms, max redeliveries, lock ms, reaper id, channel, forget ms.
    /// Returns `{workers that lost jobs, jobs returned, jobs dead-lettered}`; `{-1, 0, 0}` when another reaper holds the lock.
    static let reapExpiredWorkers = RedisScript(name: "reap_expired_workers", source: """
        local holder = redis.call('GET', KEYS[3])
        if holder and holder ~= ARGV[6] then return {-1, 0, 0} end
        redis.call('SET', KEYS[3], ARGV[6], 'PX', ARGV[5])
        local prefix, now = ARGV[1], tonumber(ARGV[2])
        local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
        local returned, dead, reaped = 0, 0, 0
        for _, member in ipairs(expired) do
          local before = returned + dead
          local stage = string.match(member, '^(%a+):')
          local valid = stage == 'verify' or stage == 'dedupe' or stage == 'grant' or stage == 'notify' or stage == 'webhook'
          local inflight = prefix .. 'inflight:' .. member
          while true do
            -- newest first, each pushed to the consuming end: the oldest ends up first in line
            local payload = redis.call('LPOP', inflight)
            if not payload then break end
            local ok, job = pcall(cjson.decode, payload)
            local reason, ticketKey = nil, nil
            if not valid then
              reason = 'unknown_stage'
            elseif not ok or type(job) ~= 'table' or type(job.ticket) ~= 'string' then
              reason = 'undecodable_job'
            else
              ticketKey = prefix .. 'ticket:' .. job.ticket
              if redis.call('EXISTS', ticketKey) == 1 then
                local count = redis.call('HINCRBY', ticketKey, 'redeliveries', 1)
                if count > tonumber(ARGV[4]) then reason = 'poison_redelivered' end
              else
                ticketKey = nil
              end
            end
            if reason then
              redis.call('LPUSH', KEYS[2], cjson.encode({job = payload, stage = stage or 'unknown', reason = reason,
                error = 'worker ' .. member .. ' lost its lease', attempts = 0, at = now,
                ticket = ok and type(job) == 'table' and job.ticket or nil}))
              if ticketKey then
                redis.call('HSET', ticketKey, 'status', 'dead', 'reason', reason, 'updated_at', ARGV[2])
                redis.call('PUBLISH', ARGV[7], job.ticket)
              end
              dead = dead + 1
            else
              redis.call('RPUSH', prefix .. 'queue:' .. stage, payload)
              returned = returned + 1
            end
          end
          if returned + dead > before then reaped = reaped + 1 end
          local seen = tonumber(redis.call('ZSCORE', KEYS[1], member))
          if seen and seen < now - tonumber(ARGV[8]) then redis.call('ZREM', KEYS[1], member) end
        end
        return {reaped, returned, dead}
        """)
}

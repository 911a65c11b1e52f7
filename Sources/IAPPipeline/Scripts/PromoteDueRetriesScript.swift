import RedisClient

extension PipelineScripts {
    /// Move retries that are due back onto their stage's queue; an entry that is not a job is dead-lettered.
    /// KEYS: retry zset, dead list. ARGV: prefix, now, limit.
    /// Returns how many entries were moved.
    static let promoteDueRetries = RedisScript(name: "promote_due_retries", source: """
        local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
        for _, member in ipairs(due) do
          redis.call('ZREM', KEYS[1], member)
          local ok, job = pcall(cjson.decode, member)
          if ok and type(job) == 'table' and (job.stage == 'verify' or job.stage == 'dedupe' or job.stage == 'grant' or job.stage == 'notify'
            or job.stage == 'webhook') then
            redis.call('LPUSH', ARGV[1] .. 'queue:' .. job.stage, member)
          else
            redis.call('LPUSH', KEYS[2], cjson.encode({job = member, stage = 'retry', reason = 'undecodable_job',
              error = 'a retry entry that is not a job', attempts = 0, at = tonumber(ARGV[2])}))
          end
        end
        return #due
        """)
}

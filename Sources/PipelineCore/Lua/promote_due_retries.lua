#!lua
--[[
  promote_due_retries: moves retries that are due (by Redis's clock) back onto their stage's
  queue; an entry that is not a job of a known stage is dead-lettered (`undecodable_job`).

  Input:
    KEYS[1] retry      the retry zset (score: due time, ms)
    KEYS[2] dead       the dead letters
    KEYS[3] verify     the queues of the stages, by name:
    KEYS[4] dedupe
    KEYS[5] grant
    KEYS[6] notify
    KEYS[7] webhook
    ARGV[1] arguments  JSON: limit, now? (a test's pinned time; else Redis's TIME)
  Output:
    how many entries were moved
]]
--- @include "redis_now"

local retry, dead = KEYS[1], KEYS[2]
local queues = {verify = KEYS[3], dedupe = KEYS[4], grant = KEYS[5], notify = KEYS[6], webhook = KEYS[7]}
local a = cjson.decode(ARGV[1])
local now = redisNow(a.now)
local due = redis.call('ZRANGEBYSCORE', retry, '-inf', now, 'LIMIT', 0, tonumber(a.limit))
for _, member in ipairs(due) do
  redis.call('ZREM', retry, member)
  local ok, job = pcall(cjson.decode, member)
  local queue = ok and type(job) == 'table' and queues[job.stage]
  if queue then
    redis.call('LPUSH', queue, member)
  else
    redis.call('LPUSH', dead, cjson.encode({job = member, stage = 'retry', reason = 'undecodable_job',
      error = 'a retry entry that is not a job', attempts = 0, at = now}))
  end
end
return #due

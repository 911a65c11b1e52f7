#!lua
--[[
  record_apple_answers: the fleet's breaker of one of Apple's services hears that the service
  answered `count` verify jobs (valid or not: it answered), the latest `age_ms` ago (a process
  tells its answers once a second: the time kept is when Apple answered, not when it was told,
  so answers told late never make a failure after them look like the job's own). An answer
  given after the breaker opened closes it. A count of 0 only reads the state. Time is Redis's
  own (TIME).

  Input:
    KEYS[1] breaker    the service's Apple breaker (hash, as record_apple_failure)
    ARGV[1] arguments  JSON: count, age_ms, now? (a test's pinned time)
  Output:
    {open (1: the breaker is open), closed (1: this call closed it), how long it was open (ms)}
]]
--- @include "redis_now"

local breaker = KEYS[1]
local a = cjson.decode(ARGV[1])
if tonumber(a.count) <= 0 then return {redis.call('HEXISTS', breaker, 'opened_at'), 0, 0} end
local now = redisNow(a.now)
local at = now - math.max(tonumber(a.age_ms), 0)
if at <= tonumber(redis.call('HGET', breaker, 'last_answer') or '-1') then
  return {redis.call('HEXISTS', breaker, 'opened_at'), 0, 0}
end
redis.call('HSET', breaker, 'last_answer', at, 'failures', 0)
local openedAt = tonumber(redis.call('HGET', breaker, 'opened_at'))
if not openedAt then return {0, 0, 0} end
if at < openedAt then return {1, 0, 0} end
redis.call('HDEL', breaker, 'opened_at', 'probe_at')
redis.call('HSET', breaker, 'closed_at', now)
return {0, 1, now - openedAt}

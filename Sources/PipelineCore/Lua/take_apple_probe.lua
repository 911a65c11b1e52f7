#!lua
--[[
  take_apple_probe: a verify worker asks, while the Apple breaker is open, whether it may take one
  job to probe Apple: one worker of the fleet may every `probe_ms`. Time is Redis's own (TIME).

  Input:
    KEYS[1] breaker    the service's Apple breaker (hash, as record_apple_failure)
    ARGV[1] arguments  JSON: probe_ms, now? (a test's pinned time)
  Output:
    {0, 0} closed: ask as usual; {1, 0} ask: this job is the probe; {2, ms} do not ask: the next
    probe is due in ms
]]
--- @include "redis_now"

local breaker = KEYS[1]
local a = cjson.decode(ARGV[1])
if redis.call('HEXISTS', breaker, 'opened_at') == 0 then return {0, 0} end
local now = redisNow(a.now)
local probeAt = tonumber(redis.call('HGET', breaker, 'probe_at') or '0')
if now >= probeAt then
  redis.call('HSET', breaker, 'probe_at', now + tonumber(a.probe_ms))
  return {1, 0}
end
return {2, probeAt - now}

#!lua
--[[
  take_api_permit: takes one App Store Server API call from the fleet's budget: at most `limit`
  calls in any `window_ms`, none while Apple's Retry-After holds the endpoint. Time is Redis's
  own (TIME), so every process counts on one clock.

  Input:
    KEYS[1] permits    `apple:permits:<environment>:<endpoint>` (zset: call id → when, ms)
    KEYS[2] hold       `apple:hold:<environment>:<endpoint>`
    ARGV[1] arguments  JSON: limit, window_ms, call (a unique id)
  Output:
    0 granted; else the milliseconds to wait before asking again
]]
--- @include "redis_now"

local permits, hold = KEYS[1], KEYS[2]
local a = cjson.decode(ARGV[1])
local now = redisNow()
local until_ms = tonumber(redis.call('GET', hold) or '0')
if until_ms > now then return until_ms - now end
redis.call('ZREMRANGEBYSCORE', permits, '-inf', now - a.window_ms)
if redis.call('ZCARD', permits) < a.limit then
  redis.call('ZADD', permits, now, a.call)
  redis.call('PEXPIRE', permits, a.window_ms * 2)
  return 0
end
local oldest = redis.call('ZRANGE', permits, 0, 0, 'WITHSCORES')
return math.max(tonumber(oldest[2]) + a.window_ms - now, 1)

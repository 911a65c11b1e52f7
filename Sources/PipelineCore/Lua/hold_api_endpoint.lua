#!lua
--[[
  hold_api_endpoint: holds an App Store Server API endpoint for the whole fleet until `until_ms`
  (Apple's Retry-After), unless a later hold is already set. Time is Redis's own (TIME).

  Input:
    KEYS[1] hold       `apple:hold:<environment>:<endpoint>` (string: until when, ms)
    ARGV[1] arguments  JSON: until_ms
  Output:
    the hold in force (ms)
]]
--- @include "redis_now"

local hold = KEYS[1]
local a = cjson.decode(ARGV[1])
local now = redisNow()
local current = tonumber(redis.call('GET', hold) or '0')
local wanted = tonumber(a.until_ms)
if wanted > current and wanted > now then
  redis.call('SET', hold, tostring(wanted), 'PX', wanted - now)
  return wanted
end
return current

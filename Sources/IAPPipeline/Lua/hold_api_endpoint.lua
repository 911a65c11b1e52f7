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
local hold = KEYS[1]
local a = cjson.decode(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local current = tonumber(redis.call('GET', hold) or '0')
local wanted = tonumber(a.until_ms)
if wanted > current and wanted > now then
  redis.call('SET', hold, tostring(wanted), 'PX', wanted - now)
  return wanted
end
return current

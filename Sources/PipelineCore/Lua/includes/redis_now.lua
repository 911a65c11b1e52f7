--[[
  redisNow(pinned): Redis's own clock (TIME) in milliseconds: the one clock every host shares,
  so that liveness (heartbeats, leases, the reaper's now), retry due times, the Server API's
  budget and holds and the sweeps' leases never depend on a host's clock. `pinned` (a test's
  fixed now) is taken instead when the caller set one.
]]
local function redisNow(pinned)
  if pinned ~= nil and pinned ~= cjson.null then return tonumber(pinned) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

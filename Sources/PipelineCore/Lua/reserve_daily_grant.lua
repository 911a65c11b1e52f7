#!lua
--[[
  reserve_daily_grant: grant stage, before `grant_purchases`, for a purchase of a product with a
  `daily_limit_per_user`: reserves the unit a place in the user's rolling 24 hours
  (`daily:<user>:<product>`, one member per unit, score = when) unless the places are taken. The
  window is the user's own key (another slot than the purchase's bucket), so the cap is counted
  in its own step: exact under concurrency, and idempotent per unit (a unit that has its place
  keeps it). A unit that does not end granted gives its place back (`release_daily_grant`).

  Input:
    KEYS[1] daily      `daily:<user>:<product>`
    ARGV[1] arguments  JSON: unit, limit, now
  Output:
    1 the unit has its place, 0 the cap is reached (the grant holds it, `daily_limit_exceeded`)
]]

local daily = KEYS[1]
local a = cjson.decode(ARGV[1])
redis.call('ZREMRANGEBYSCORE', daily, '-inf', string.format('%.0f', tonumber(a.now) - 86400000))
if redis.call('ZSCORE', daily, a.unit) then return 1 end
if redis.call('ZCARD', daily) >= tonumber(a.limit) then return 0 end
redis.call('ZADD', daily, a.now, a.unit)
redis.call('PEXPIRE', daily, 86400000)
return 1

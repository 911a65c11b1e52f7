#!lua
--[[
  release_daily_grant: grant stage, after `grant_purchases`: a unit that had its place in the
  user's rolling 24 hours (`reserve_daily_grant`) and did not end granted (a duplicate, held by
  another rule, rejected) gives it back. Running it again changes nothing.

  Input:
    KEYS[1] daily      `daily:<user>:<product>`
    ARGV[1] unit
  Output:
    1 released, 0 the unit had no place
]]

return redis.call('ZREM', KEYS[1], ARGV[1])

#!lua
--[[
  finish_notification_sweep: ends a sweep by the process that holds its lease: the cursors of the
  environments it read to the end move to where it read up to, the next sweep is due `next_in_ms`
  from now, the lease is given back, and what it found is kept for `iapctl` and the metrics. A
  process whose lease expired (another took over) changes nothing.

  Input:
    KEYS[1] sweep      `notification-sweep` or `refund-sweep` (hash, see claim_notification_sweep)
    ARGV[1] arguments  JSON: owner, next_in_ms, cursors ({environment: ms}, those read to the end),
                       seen, new, invalid, error ('' when none)
  Output:
    'finished'  the cursors moved, the lease is free
    'lost'      the caller no longer held the lease: nothing changed
]]
--- @include "redis_now"

local sweep = KEYS[1]
local a = cjson.decode(ARGV[1])
local now = redisNow()
local s = redis.call('HMGET', sweep, 'owner', 'lease_until')
if s[1] ~= a.owner or tonumber(s[2] or '0') <= now then return 'lost' end
for environment, cursor in pairs(a.cursors) do
  redis.call('HSET', sweep, 'cursor:' .. environment, cursor)
end
redis.call('HSET', sweep, 'next_at', now + a.next_in_ms, 'last_finished_at', now, 'last_seen', a.seen,
  'last_new', a.new, 'last_invalid', a.invalid, 'last_error', a.error)
redis.call('HDEL', sweep, 'owner', 'lease_until')
return 'finished'

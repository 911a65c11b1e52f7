#!lua
--[[
  claim_notification_sweep: takes (or renews) the lease on the fleet's one notification sweep.
  A process may sweep when the sweep is due (`next_at` absent or past) and no other process holds
  an unexpired lease; the holder renews its own lease whether due or not (`renew`). Time is
  Redis's own (TIME), so every process counts on one clock.

  Input:
    KEYS[1] sweep      `notification-sweep`, or `refund-sweep` (the same lease) (hash: owner, lease_until, next_at, cursor:<name>,
                       last_* figures)
    ARGV[1] arguments  JSON: owner (a process's unique id), lease_ms, renew (bool)
  Output:
    {'claimed', now, cursors}  the lease is the caller's; cursors: JSON {<name>: ms} of every
                               `cursor:<name>` field (`Production`, `Sandbox`; with several apps
                               `<bundle id>:Production`, …)
    {'not_due', next_at}                                            nobody's turn before next_at
    {'held', lease_until}                                           another process sweeps
    {'lost', 0}                                                     `renew` by a process that no longer holds it
]]
--- @include "redis_now"

local sweep = KEYS[1]
local a = cjson.decode(ARGV[1])
local now = redisNow()
local s = redis.call('HMGET', sweep, 'owner', 'lease_until', 'next_at')
local owner, leaseUntil, nextAt = s[1], tonumber(s[2] or '0'), tonumber(s[3] or '0')
local mine = owner == a.owner and leaseUntil > now
if a.renew then
  if not mine then return {'lost', 0} end
elseif not mine then
  if owner and leaseUntil > now then return {'held', leaseUntil} end
  if nextAt > now then return {'not_due', nextAt} end
end
redis.call('HSET', sweep, 'owner', a.owner, 'lease_until', now + a.lease_ms)
if not a.renew then redis.call('HSET', sweep, 'last_started_at', now) end
-- Every cursor (one per app and environment); the hash holds a few dozen fields at most.
local fields = redis.call('HGETALL', sweep)
local cursors, any = {}, false
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 7) == 'cursor:' then
    cursors[string.sub(fields[i], 8)] = fields[i + 1]
    any = true
  end
end
return {'claimed', now, any and cjson.encode(cursors) or '{}'}

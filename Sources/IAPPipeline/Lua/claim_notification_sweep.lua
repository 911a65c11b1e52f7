#!lua
--[[
  claim_notification_sweep: takes (or renews) the lease on the fleet's one notification sweep.
  A process may sweep when the sweep is due (`next_at` absent or past) and no other process holds
  an unexpired lease; the holder renews its own lease whether due or not (`renew`). Time is
  Redis's own (TIME), so every process counts on one clock.

  Input:
    KEYS[1] sweep      `notification-sweep` (hash: owner, lease_until, next_at, cursor:<environment>,
                       last_* figures)
    ARGV[1] arguments  JSON: owner (a process's unique id), lease_ms, renew (bool)
  Output:
    {'claimed', now, cursor:Production or '', cursor:Sandbox or ''}  the lease is the caller's
    {'not_due', next_at}                                            nobody's turn before next_at
    {'held', lease_until}                                           another process sweeps
    {'lost', 0}                                                     `renew` by a process that no longer holds it
]]
local sweep = KEYS[1]
local a = cjson.decode(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', sweep, 'owner', 'lease_until', 'next_at', 'cursor:Production', 'cursor:Sandbox')
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
return {'claimed', now, s[4] or '', s[5] or ''}

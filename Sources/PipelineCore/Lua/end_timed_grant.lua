#!lua
--[[
  end_timed_grant: one of a user's grants for a time ends, once: at its end, by whichever process
  finds it due on the schedule (`expired`), or taken back before it (`DELETE
  /v1/users/{id}/grants/{grant_id}`: `revoked`). The record says `ended`, its end leaves the
  schedule, and an `entitlement_ended` entry goes to the user. A grant ended before, or one not
  yet due when only a due one may end, is left as it is.

  Input:
    KEYS[1] grants  `timed-grants:<user>`
    KEYS[2] ends    the bucket's `timed-grant-ends`
    KEYS[3] stream  the bucket's fulfilment stream
    KEYS[4] events  the bucket's `user-events` (appendEvent)
    ARGV[1] arguments  JSON: user, grant_id, now, why (`expired` or `revoked`), by (who took it back, or '')
  Output:
    {1, record} ended now; {0, record} ended before, or not due yet (`expired` before `until`);
    {-1, ''} no such grant
]]
--- @include "add_event"

local grants, ends, stream = KEYS[1], KEYS[2], KEYS[3]
local events = {index = KEYS[4]}
local a = cjson.decode(ARGV[1])
local kept = redis.call('HGET', grants, a.grant_id)
if not kept then
  redis.call('ZREM', ends, a.user .. '\0' .. a.grant_id)
  return {-1, ''}
end
local grant = cjson.decode(kept)
if grant.status ~= 'active' or (a.why == 'expired' and tonumber(grant['until']) > tonumber(a.now)) then return {0, kept} end
grant.status = 'ended'
grant.ended_at = a.now
grant.ended_by = a.why
local record = cjson.encode(grant)
redis.call('HSET', grants, a.grant_id, record)
redis.call('ZREM', ends, a.user .. '\0' .. a.grant_id)
addEvent(stream, events, {event = 'entitlement_ended', grant_id = a.grant_id, entitlement = grant.entitlement,
  expires_at = grant['until'], reason = grant.reason, ended_by = a.why, taken_back_by = a.by, ended_at = a.now}, a.user)
return {1, record}

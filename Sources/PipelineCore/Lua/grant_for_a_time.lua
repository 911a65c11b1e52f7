#!lua
--[[
  grant_for_a_time: an entitlement given to a user until a moment (support's compensation, a
  live-ops promotion: `POST /v1/users/{id}/grants`, `iapctl user grant`, the console), once per
  `grant_id` of the user: the grant's record in the user's `timed-grants:<user>`, its end on the
  bucket's schedule (`timed-grant-ends`, read by `end_timed_grant`), and an `entitlement_granted`
  entry for the user. The same grant again changes nothing; another grant under the same id is
  refused.

  Input:
    KEYS[1] grants  `timed-grants:<user>` (hash: grant id → the grant's JSON)
    KEYS[2] ends    the bucket's `timed-grant-ends` (zset: `<user> NUL <grant id>` → until, ms)
    KEYS[3] stream  the bucket's fulfilment stream
    KEYS[4] events  the bucket's `user-events` (appendEvent)
    ARGV[1] arguments  JSON: user, grant_id, entitlement, until (ms), exact_until ('1': until was
                       given as a moment, not a duration), reason, source, by, now
  Output:
    {1, record} granted now; {0, record} the same grant was made before; {-1, record} the id
    names another grant (entitlement or reason differ, or the moment it ends): nothing written
]]
--- @include "add_event"

local grants, ends, stream = KEYS[1], KEYS[2], KEYS[3]
local events = {index = KEYS[4]}
local a = cjson.decode(ARGV[1])
local kept = redis.call('HGET', grants, a.grant_id)
if kept then
  local before = cjson.decode(kept)
  -- The same order sent again: an end given as a duration is counted from each sending, so
  -- only an end given as a moment (`exact_until`) must be the same.
  if before.entitlement == a.entitlement and before.reason == a.reason
    and (a.exact_until ~= '1' or before['until'] == a['until']) then return {0, kept} end
  return {-1, kept}
end
local record = cjson.encode({grant_id = a.grant_id, entitlement = a.entitlement, ['until'] = a['until'], reason = a.reason,
  source = a.source, by = a.by, granted_at = a.now, status = 'active'})
redis.call('HSET', grants, a.grant_id, record)
redis.call('ZADD', ends, a['until'], a.user .. '\0' .. a.grant_id)
addEvent(stream, events, {event = 'entitlement_granted', grant_id = a.grant_id, entitlement = a.entitlement,
  expires_at = a['until'], reason = a.reason, source = a.source, granted_by = a.by, granted_at = a.now}, a.user)
return {1, record}

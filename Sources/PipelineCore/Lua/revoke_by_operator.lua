#!lua
--[[
  revoke_by_operator: an operator takes a grant back by hand: once (`revoked_at`,
  `revocation_reason` `operator`, `revoked_by`, `note` on the record; one `revoked` entry,
  `source=operator`). Not a refund: the user's refund count does not move.

  Input:
    KEYS[1] record     `grant:<unit>`
    KEYS[2] stream     the fulfilment stream
    KEYS[3] events     the bucket's `user-events` (appendEvent)
    ARGV[1] arguments  JSON: now, operator, note
  Output:
    {1, 'revoked'}; {0, 'already_revoked'}; {-1} nothing is granted under that unit
]]
--- @include "grant_entry"
--- @include "append_event"

local record, stream = KEYS[1], KEYS[2]
local a = cjson.decode(ARGV[1])
if redis.call('EXISTS', record) == 0 then return {-1} end
if redis.call('HEXISTS', record, 'revoked_at') == 1 then return {0, 'already_revoked'} end
redis.call('HSET', record, 'revoked_at', a.now, 'revocation_reason', 'operator', 'revoked_by', a.operator, 'note', a.note)
redis.call('HDEL', record, 'reinstated_at')
appendEvent(stream, {index = KEYS[3]}, (grantEntry(record,
  {'event', 'revoked', 'source', 'operator', 'operator', a.operator, 'note', a.note},
  {'revoked_at', a.now, 'revocation_reason', 'operator'})))
return {1, 'revoked'}

#!lua
--[[
  reject_held_purchase: an operator rejects a held purchase: never granted (its claim stays with
  its ticket, so no other account is granted it either), one `rejected` entry on the fulfilment
  stream with `source=operator`, the hold records the decision and leaves the index; then the
  hold's ticket is told (`settle_held_ticket`, in the ticket's bucket), with the rule that held it.

  Input:
    KEYS[1] hold       `held:<unit>`
    KEYS[2] holds      the bucket's `held` (the index)
    KEYS[3] stream     the fulfilment stream
    KEYS[4] events     the bucket's `user-events` (appendEvent)
    ARGV[1] arguments  JSON: now, operator, note
  Output:
    {1, 'rejected'}; {0, status} decided already; {-1} no such hold
]]
--- @include "read_hold"
--- @include "hold_entry"
--- @include "settle_hold"
--- @include "append_event"

local hold, holds, stream = KEYS[1], KEYS[2], KEYS[3]
local a = cjson.decode(ARGV[1])
local h = readHold(hold)
if not h then return {-1} end
if h.status ~= 'held' then return {0, h.status} end
appendEvent(stream, {index = KEYS[4]}, holdEntry(h, {'event', 'rejected', 'source', 'operator', 'operator', a.operator},
  {'reason', h.reason, 'rejected_at', a.now}))
return {1, settleHold({hold = hold, holds = holds}, h, 'rejected', h.reason, a)}

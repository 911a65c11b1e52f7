#!lua
--[[
  reject_held_purchase: an operator rejects a held purchase: never granted (its claim stays with
  its ticket, so no other account is granted it either), one `rejected` entry on the fulfilment
  stream with `source=operator`, the hold records the decision and leaves the index, and the
  ticket shows the purchase rejected with the rule that held it.

  The ticket's key follows from the hold, which only this script reads: called with another (or
  none), it answers {-2, hold} naming it and changes nothing; the caller declares it and calls again.

  Input:
    KEYS[1] hold       `held:<unit>`
    KEYS[2] holds      `held` (the index)
    KEYS[3] ticket     the hold's ticket hash
    KEYS[4] stream     the fulfilment stream
    ARGV[1] arguments  JSON: now, operator, note, channel, ticket
  Output:
    {1, 'rejected'}; {0, status} decided already; {-1} no such hold; {-2, hold (JSON: ticket)}
    declare its ticket and call again
]]
--- @include "read_hold"
--- @include "hold_entry"
--- @include "settle_hold"

local hold, holds, ticket, stream = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local a = cjson.decode(ARGV[1])
local h = readHold(hold)
if not h then return {-1} end
if h.status ~= 'held' then return {0, h.status} end
if h.ticket ~= a.ticket then return {-2, cjson.encode({ticket = h.ticket})} end
redis.call('XADD', stream, '*', unpack(holdEntry(h, {'event', 'rejected', 'source', 'operator', 'operator', a.operator},
  {'reason', h.reason, 'rejected_at', a.now})))
return {1, settleHold({hold = hold, holds = holds, ticket = ticket}, h, 'rejected', h.reason, a)}

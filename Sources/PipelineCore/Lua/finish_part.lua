#!lua
--[[
  finish_part: grant stage, one part of a receipt whose purchases lie in several buckets, after
  its grant: records the part's outcome on the client's ticket (`part:<part id>`), and when every
  part named in `parts` has reported, gives the ticket its final status (finishParts). Calling it
  again with the same outcome changes nothing; a later outcome of the same part (a dead part
  replayed and granted) replaces the earlier one.

  Input:
    KEYS[1] ticket     the client's ticket hash
    ARGV[1] arguments  JSON: part (its id), outcome (JSON text: status, transactions, reason?,
                       environment?), ticket, now, channel
  Output:
    1 recorded, -1 the ticket is gone (nothing to tell)
]]
--- @include "finish_parts"

local ticketKey = KEYS[1]
local a = cjson.decode(ARGV[1])
if redis.call('EXISTS', ticketKey) == 0 then return -1 end
redis.call('HSET', ticketKey, 'part:' .. a.part, a.outcome)
finishParts(ticketKey, a.ticket, a.now, a.channel)
return 1

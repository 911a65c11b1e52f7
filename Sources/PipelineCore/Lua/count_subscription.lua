#!lua
--[[
  count_subscription: `iapctl report recount --repair`: one subscription's record counted in its
  bucket's live count of subscribers as the step that last changed it would have counted it
  (countSubscriber): what a record written before the count existed needs once. A record counted
  already changes nothing.

  Input:
    KEYS[1] record       `subscription:<original>`
    KEYS[2] subscribers  the record's bucket's `subscribers`
    (no ARGV[1]: the record says everything it counts in)
  Output:
    1 counted anew, 0 counted already, -1 no such record
]]
--- @include "count_subscriber"

local record, subscribers = KEYS[1], KEYS[2]
if redis.call('EXISTS', record) == 0 then return -1 end
local before = redis.call('HGET', record, 'counted') or ''
countSubscriber(subscribers, record)
if (redis.call('HGET', record, 'counted') or '') == before then return 0 end
return 1

#!lua
--[[
  settle_held_ticket: after an operator's decision on a held purchase (`release_held_purchase`,
  `reject_held_purchase`), the hold's ticket (if it has not expired) gives the purchase its new
  outcome and takes the status its purchases add up to (ticketStatus); publishes the ticket. The
  ticket lies in the bucket its id names, the hold in its purchase's: two steps. A ticket split
  into parts has the line changed in its part's outcome too. Running it again (an operator
  repeats a decision whose ticket was not told) changes nothing more.

  Input:
    KEYS[1] ticket     the hold's ticket hash
    ARGV[1] arguments  JSON: ticket, transaction_id, outcome (`granted` or `rejected`), reason,
                       now, channel
  Output:
    1 the ticket now says so, 0 its line was not held (told before), -1 the ticket is gone
]]
--- @include "ticket_status"

local ticketKey = KEYS[1]
local a = cjson.decode(ARGV[1])

-- The decided line of `lines` takes its new outcome; returns whether one did, and what the
-- lines add up to (granted, duplicates, held, the first other reason).
local function settleLine(lines)
  local changed = false
  local granted, duplicates, held, reason = 0, 0, 0, nil
  for _, entry in ipairs(lines) do
    if entry.transaction_id == a.transaction_id and entry.outcome == 'held' then
      changed = true
      entry.outcome = a.outcome
      if a.outcome == 'rejected' then entry.reason = a.reason else entry.reason = nil end
    end
    if entry.outcome == 'granted' then granted = granted + 1
    elseif entry.outcome == 'duplicate' then duplicates = duplicates + 1
    elseif entry.outcome == 'held' then held = held + 1
    elseif not reason and entry.reason then reason = entry.reason end
  end
  return changed, granted, duplicates, held, reason
end

local text = redis.call('HGET', ticketKey, 'transactions')
if not text then return -1 end
local list = cjson.decode(text)
local changed, granted, duplicates, held, reason = settleLine(list)
if not changed then return 0 end
-- A ticket split into parts keeps each part's outcome (`part:<id>`): the part that held the
-- purchase says it too, so that a part reporting again adds up to the same.
for _, name in ipairs(redis.call('HKEYS', ticketKey)) do
  if string.sub(name, 1, 5) == 'part:' then
    local part = cjson.decode(redis.call('HGET', ticketKey, name))
    local touched, partGranted, partDuplicates, partHeld = settleLine(part.transactions or {})
    if touched then
      part.status = ticketStatus(partGranted, partDuplicates, partHeld)
      redis.call('HSET', ticketKey, name, cjson.encode(part))
    end
  end
end
local status = ticketStatus(granted, duplicates, held)
redis.call('HSET', ticketKey, 'status', status, 'updated_at', a.now)
if #list > 0 then redis.call('HSET', ticketKey, 'transactions', cjson.encode(list)) end
if status == 'rejected' then
  redis.call('HSET', ticketKey, 'reason', reason or 'no_purchases')
else
  redis.call('HDEL', ticketKey, 'reason')
end
redis.call('SPUBLISH', a.channel, a.ticket)
return 1

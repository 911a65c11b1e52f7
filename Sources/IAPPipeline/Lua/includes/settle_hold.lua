--[[
  settleHold(k, h, outcome, why, a): an operator's decision on hold `h` (`outcome` `granted` or
  `rejected`, for `why`). Records it on the hold (`released`/`rejected`, `decided_at`,
  `decided_by`, `decision_reason`, `note`), takes the unit off the index, and gives the ticket (if
  it has not expired) the purchase's new outcome and the status its purchases add up to (see
  ticketStatus); publishes the ticket. Returns the decision.

  k: hold, holds (the index), ticket (the hold's ticket). a: now, operator, note, channel.
]]
--- @include "ticket_status"

local function settleHold(k, h, outcome, why, a)
  local decision = outcome == 'granted' and 'released' or 'rejected'
  redis.call('HSET', k.hold, 'status', decision, 'decided_at', a.now, 'decided_by', a.operator,
    'decision_reason', why, 'note', a.note)
  redis.call('ZREM', k.holds, h.unit)
  local text = redis.call('HGET', k.ticket, 'transactions')
  if not text then return decision end
  local list = cjson.decode(text)
  local granted, duplicates, held, reason = 0, 0, 0, nil
  for _, entry in ipairs(list) do
    if entry.transaction_id == h.transaction_id and entry.outcome == 'held' then
      entry.outcome = outcome
      if outcome == 'rejected' then entry.reason = why else entry.reason = nil end
    end
    if entry.outcome == 'granted' then granted = granted + 1
    elseif entry.outcome == 'duplicate' then duplicates = duplicates + 1
    elseif entry.outcome == 'held' then held = held + 1
    elseif not reason and entry.reason then reason = entry.reason end
  end
  local status = ticketStatus(granted, duplicates, held)
  redis.call('HSET', k.ticket, 'status', status, 'updated_at', a.now)
  if #list > 0 then redis.call('HSET', k.ticket, 'transactions', cjson.encode(list)) end
  if status == 'rejected' then
    redis.call('HSET', k.ticket, 'reason', reason or 'no_purchases')
  else
    redis.call('HDEL', k.ticket, 'reason')
  end
  redis.call('SPUBLISH', a.channel, h.ticket)
  return decision
end

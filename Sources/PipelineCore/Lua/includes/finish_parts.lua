--[[
  finishParts(ticketKey, ticket, now, channel): a ticket split into parts (`parts`, a JSON array
  of part ids) takes its final status once every part has reported (`part:<id>`, JSON: status,
  transactions, reason?, environment?): what its purchases add up to (ticketStatus over the
  parts' statuses), with every part's transactions in the order of the parts; published on
  `channel`. Returns whether the ticket is final.
]]
--- @include "ticket_status"

local function finishParts(ticketKey, ticket, now, channel)
  local named = redis.call('HGET', ticketKey, 'parts')
  if not named then return false end
  local granted, duplicates, held = 0, 0, 0
  local transactions, reason, environment = {}, nil, nil
  for _, id in ipairs(cjson.decode(named)) do
    local text = redis.call('HGET', ticketKey, 'part:' .. id)
    if not text then return false end
    local part = cjson.decode(text)
    if part.status == 'granted' then granted = granted + 1
    elseif part.status == 'duplicate' then duplicates = duplicates + 1
    elseif part.status == 'held' then held = held + 1
    elseif not reason and part.reason then reason = part.reason end
    for _, line in ipairs(part.transactions or {}) do transactions[#transactions + 1] = line end
    environment = environment or part.environment
  end
  local status = ticketStatus(granted, duplicates, held)
  local encoded = '[]'
  if #transactions > 0 then encoded = cjson.encode(transactions) end
  redis.call('HSET', ticketKey, 'status', status, 'transactions', encoded, 'updated_at', now)
  if environment then redis.call('HSET', ticketKey, 'environment', environment) end
  if status == 'rejected' then
    redis.call('HSET', ticketKey, 'reason', reason or 'no_purchases')
  else
    redis.call('HDEL', ticketKey, 'reason')
  end
  redis.call('SPUBLISH', channel, ticket)
  return true
end

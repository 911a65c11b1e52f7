--[[
  ackForOwner(inflight, ticket, record, taken, expected): the start of a step on a grant whose
  owner is data (a refund, its reversal). Returns -1 when the ticket hash is gone, -2 when the
  grant names an owner other than `expected` (the caller declares that owner's keys and calls
  again; nothing moved), 0 when the worker no longer holds the job, else 1 once the job is acked;
  and the grant's owner (nil: nothing is granted under the unit).
]]
local function ackForOwner(inflight, ticket, record, taken, expected)
  if redis.call('EXISTS', ticket) == 0 then return -1, nil end
  local owner = redis.call('HGET', record, 'user_id')
  if owner and owner ~= expected then return -2, owner end
  if redis.call('LREM', inflight, 1, taken) == 0 then return 0, owner end
  return 1, owner
end

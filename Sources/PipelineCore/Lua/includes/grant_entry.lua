--[[
  grantEntry(record, head, tail): the fields of a fulfilment entry about the grant `record`, as
  one list for XADD: `head`, then the grant's ticket, user_id, product_id, quantity,
  transaction_id, original_transaction_id, environment, unit and granted_at, then `tail`.
  Returns the list and the grant's user.
]]
local function grantEntry(record, head, tail)
  local names = {'ticket', 'user_id', 'product_id', 'quantity', 'transaction_id', 'original_transaction_id',
    'environment', 'unit', 'granted_at'}
  local values = redis.call('HMGET', record, unpack(names))
  local fields = {}
  for _, v in ipairs(head) do fields[#fields + 1] = v end
  for i, name in ipairs(names) do
    fields[#fields + 1] = name
    fields[#fields + 1] = values[i]
  end
  for _, v in ipairs(tail) do fields[#fields + 1] = v end
  return fields, values[2]
end

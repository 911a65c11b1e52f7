--[[
  grantEntry(record, head, tail): the fields of a fulfilment entry about the grant `record`, as
  one list for XADD: `head`, then the grant's ticket, user_id, product_id, quantity,
  transaction_id, original_transaction_id, environment, unit and granted_at, what it cost where
  the record says (price, currency, storefront, in_app_ownership_type: what a refund's figures
  are counted by), the app (bundle_id) where it says, then `tail`. Returns the list and the grant's user.
]]
local function grantEntry(record, head, tail)
  local names = {'ticket', 'user_id', 'product_id', 'quantity', 'transaction_id', 'original_transaction_id',
    'environment', 'unit', 'granted_at', 'price', 'currency', 'storefront', 'in_app_ownership_type', 'bundle_id'}
  local values = redis.call('HMGET', record, unpack(names))
  local fields = {}
  for _, v in ipairs(head) do fields[#fields + 1] = v end
  for i, name in ipairs(names) do
    if i <= 9 or values[i] then
      fields[#fields + 1] = name
      fields[#fields + 1] = values[i]
    end
  end
  for _, v in ipairs(tail) do fields[#fields + 1] = v end
  return fields, values[2]
end

--[[
  holdEntry(h, head, tail): the fields of a fulfilment entry about hold `h`, as one list for
  XADD: `head`, then what the entry repeats of the hold, then `tail`.
]]
local function holdEntry(h, head, tail)
  local fields = {}
  for _, v in ipairs(head) do fields[#fields + 1] = v end
  for _, v in ipairs({'ticket', h.ticket, 'user_id', h.user_id, 'product_id', h.product_id, 'quantity', h.quantity,
    'transaction_id', h.transaction_id, 'original_transaction_id', h.original_transaction_id,
    'environment', h.environment, 'unit', h.unit, 'held_at', h.held_at, 'hold_reason', h.reason}) do
    fields[#fields + 1] = v
  end
  for _, v in ipairs(tail) do fields[#fields + 1] = v end
  return fields
end

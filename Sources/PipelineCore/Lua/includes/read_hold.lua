--[[
  readHold(hold): the hold hash as a table (status, reason, ticket, user_id, product_id, quantity,
  transaction_id, original_transaction_id, environment, unit, held_at, source, currency,
  app_account_token, app_transaction_id, kind, entitlements, expires_at, signed_at, sale, period_mrr, …), or nil
  when there is none.
]]
local function readHold(hold)
  local fields = redis.call('HGETALL', hold)
  if #fields == 0 then return nil end
  local h = {}
  for i = 1, #fields, 2 do h[fields[i]] = fields[i + 1] end
  return h
end

--[[
  indexPurchase(purchases, unit, sale, now): a unit granted to a user joins the user's index of
  their purchases (`purchases:<user>`, zset: unit → when it was bought, ms: the sale's
  `purchase_date`, else `now`), which the user's record and spend read (with the grant records
  it names). The ledger's: never trimmed (erasure takes it).
]]
local function indexPurchase(purchases, unit, sale, now)
  local purchased = now
  for i = 1, #(sale or {}), 2 do
    if sale[i] == 'purchase_date' then purchased = sale[i + 1] end
  end
  redis.call('ZADD', purchases, tonumber(purchased) or tonumber(now), unit)
end

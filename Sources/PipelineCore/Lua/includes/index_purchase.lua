--[[
  indexPurchase(purchases, unit, sale, now): a unit granted to a user joins the user's index of
  their purchases (`purchases:<user>`, zset: unit → when it was bought, ms: the sale's
  `purchase_date`, else `now`), which the user's record and spend read (with the grant records
  it names). The ledger's: never trimmed (erasure takes it).
]]
--- @include "sale_field"

local function indexPurchase(purchases, unit, sale, now)
  redis.call('ZADD', purchases, tonumber(saleField(sale, 'purchase_date')) or tonumber(now), unit)
end

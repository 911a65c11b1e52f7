--[[
  saleField(sale, name): the value of `name` in a purchase's sale fields (name, value, …:
  `InAppTransaction.saleFields`, the grant record's and the hold's), or '' when Apple did not say it.
]]
local function saleField(sale, name)
  for i = 1, #(sale or {}) - 1, 2 do
    if sale[i] == name then return sale[i + 1] end
  end
  return ''
end

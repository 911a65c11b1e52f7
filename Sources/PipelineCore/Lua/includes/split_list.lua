--[[
  splitList(text): the items of a comma-separated list (entitlements), none for nil or ''.
]]
local function splitList(text)
  local items = {}
  for item in string.gmatch(text or '', '[^,]+') do items[#items + 1] = item end
  return items
end

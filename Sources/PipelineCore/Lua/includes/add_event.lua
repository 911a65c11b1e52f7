--[[
  addEvent(stream, fields, user): one entry on the fulfilment stream: `event` first, then
  `user_id`, then the other fields in name order (a table of strings).
]]
local function addEvent(stream, fields, user)
  local entry = {'event', fields.event, 'user_id', user}
  local names = {}
  for name in pairs(fields) do
    if name ~= 'event' and name ~= 'user_id' then names[#names + 1] = name end
  end
  table.sort(names)
  for _, name in ipairs(names) do
    entry[#entry + 1] = name
    entry[#entry + 1] = fields[name]
  end
  redis.call('XADD', stream, '*', unpack(entry))
end

--[[
  addEvent(stream, events, fields, user): one entry on the fulfilment stream (appendEvent: and
  on the user's index, `events`): `event` first, then `user_id`, then the other fields in name
  order (a table of strings).
]]
--- @include "append_event"

local function addEvent(stream, events, fields, user)
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
  appendEvent(stream, events, entry)
end

--[[
  ticketStatus(granted, duplicates, held): what a ticket's purchases add up to: `held` while any
  is held, else `granted` when any was granted, else `duplicate`, else `rejected`.
]]
local function ticketStatus(granted, duplicates, held)
  if held > 0 then return 'held' end
  if granted > 0 then return 'granted' end
  if duplicates > 0 then return 'duplicate' end
  return 'rejected'
end

#!lua
--[[
  mark_verifying: verify stage, on taking jobs: shows `verifying` on each ticket that is queued or
  retrying, and announces it.

  Input:
    KEYS[1]…KEYS[n] tickets   the tickets' hashes
    ARGV[1] arguments         JSON: now, channel, tickets (the ticket ids, in the order of KEYS)
  Output:
    per ticket: 1, or -1 when its hash is gone
]]
local a = cjson.decode(ARGV[1])
local found = {}
for i, key in ipairs(KEYS) do
  local status = redis.call('HGET', key, 'status')
  if not status then
    found[i] = -1
  else
    found[i] = 1
    if status == 'queued' or status == 'retrying' then
      redis.call('HSET', key, 'status', 'verifying', 'updated_at', a.now)
      redis.call('SPUBLISH', a.channel, a.tickets[i])
    end
  end
end
return found

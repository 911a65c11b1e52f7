--[[
  newTicket(key, user, now, ttl, fields): a ticket born `queued`, no attempts spent, of `user`
  (`''`: nobody's yet), created and updated `now`, with `fields` (a flat list of more field,
  value pairs), living `ttl` seconds: the one shape of every ticket a script queues work under.
]]
local function newTicket(key, user, now, ttl, fields)
  redis.call('HSET', key, 'status', 'queued', 'attempts', '0', 'user_id', user, 'created_at', now, 'updated_at', now,
    unpack(fields or {}))
  redis.call('EXPIRE', key, ttl)
end

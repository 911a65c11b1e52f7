#!lua
--[[
  pseudonymise_tickets: erasure, the tickets of one bucket that named the user (those of their
  purchases): each names the pseudonym instead, as long as it lives. A ticket gone is left gone.

  Input:
    KEYS[1] …  the tickets (`ticket:<id>`, one bucket's)
    ARGV[1] user
    ARGV[2] pseudonym
  Output:
    how many tickets were renamed
]]
local renamed = 0
for _, key in ipairs(KEYS) do
  if redis.call('HGET', key, 'user_id') == ARGV[1] then
    redis.call('HSET', key, 'user_id', ARGV[2])
    renamed = renamed + 1
  end
end
return renamed

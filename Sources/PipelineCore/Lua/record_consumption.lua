#!lua
--[[
  record_consumption: what the game says of one of a user's purchases (for Apple's consumption
  requests), replacing what it said before of that purchase. A user keeps at most `max` facts:
  a fact about a new purchase past that replaces the one recorded longest ago (Apple asks about a
  purchase within its refund window, so the oldest fact is the least needed).

  Input:
    KEYS[1] consumption  `consumption:<user>` (hash: transaction id → JSON with recorded_at)
    ARGV[1] arguments    JSON: transaction_id, fact (JSON text), max
  Output:
    the transaction id whose fact was dropped to make room, or '' (none)
]]
local consumption = KEYS[1]
local a = cjson.decode(ARGV[1])
local dropped = ''
if redis.call('HEXISTS', consumption, a.transaction_id) == 0
  and redis.call('HLEN', consumption) >= tonumber(a.max) then
  local oldest, oldestAt = nil, nil
  local fields = redis.call('HGETALL', consumption)
  for i = 1, #fields, 2 do
    local ok, fact = pcall(cjson.decode, fields[i + 1])
    local at = (ok and type(fact) == 'table' and tonumber(fact.recorded_at)) or 0
    if oldestAt == nil or at < oldestAt then oldest, oldestAt = fields[i], at end
  end
  redis.call('HDEL', consumption, oldest)
  dropped = oldest
end
redis.call('HSET', consumption, a.transaction_id, a.fact)
return dropped

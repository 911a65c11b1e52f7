#!lua
--[[
  force_recheck: `iapctl recheck`: makes a subscription's re-check due now with its tries counted
  from zero (even one that left the schedule).

  Input:
    KEYS[1] rechecks   the re-check schedule (zset)
    KEYS[2] record     `subscription:<original>`
    ARGV[1] arguments  JSON: original_transaction_id, now
  Output:
    1 due now; 0 no such subscription
]]
local rechecks, record = KEYS[1], KEYS[2]
local a = cjson.decode(ARGV[1])
if redis.call('EXISTS', record) == 0 then return 0 end
redis.call('HDEL', record, 'recheck_tries')
redis.call('ZADD', rechecks, a.now, a.original_transaction_id)
return 1

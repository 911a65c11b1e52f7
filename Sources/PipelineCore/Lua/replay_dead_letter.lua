#!lua
--[[
  replay_dead_letter: takes one dead letter and queues its job again with attempts reset; only
  the caller that removes the entry queues it, so concurrent replays cannot queue it twice.

  Input:
    KEYS[1] dead       the dead letters (list)
    KEYS[2] queue      the job's stage's queue
    KEYS[3] ticket     the job's ticket hash
    ARGV[1] entry      the dead letter, as listed
    ARGV[2] arguments  JSON: job (attempts reset), now, channel, ticket, ttl (s)
  Output:
    1 replayed; 0 the entry is no longer there
]]
local dead, queue, ticket = KEYS[1], KEYS[2], KEYS[3]
if redis.call('LREM', dead, 1, ARGV[1]) == 0 then return 0 end
local a = cjson.decode(ARGV[2])
redis.call('LPUSH', queue, a.job)
redis.call('HSET', ticket, 'status', 'queued', 'attempts', '0', 'redeliveries', '0', 'updated_at', a.now)
redis.call('HDEL', ticket, 'reason', 'last_error')
if redis.call('TTL', ticket) < 0 then redis.call('EXPIRE', ticket, a.ttl) end
redis.call('SPUBLISH', a.channel, a.ticket)
return 1

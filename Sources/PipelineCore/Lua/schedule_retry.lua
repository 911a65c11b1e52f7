#!lua
--[[
  schedule_retry: acks a job and parks it in the retry set until it is due (Redis's time plus
  the delay: no host's clock decides when); the ticket shows `retrying`.

  Input:
    KEYS[1] inflight   the worker's in-flight list
    KEYS[2] retry      the retry zset (score: due time, ms)
    KEYS[3] ticket     the job's ticket hash
    ARGV[1] taken      the job as taken
    ARGV[2] arguments  JSON: next (the job for its next attempt), delay_ms, attempts,
                       last_error, channel, ticket, now? (a test's pinned time; else Redis's TIME)
  Output:
    1 parked, 0 the worker no longer holds the job, -1 its ticket is gone
]]
--- @include "ack_job"
--- @include "redis_now"

local inflight, retry, ticket = KEYS[1], KEYS[2], KEYS[3]
local acked = ackJob(inflight, ticket, ARGV[1])
if acked ~= 1 then return acked end
local a = cjson.decode(ARGV[2])
local now = redisNow(a.now)
redis.call('ZADD', retry, now + tonumber(a.delay_ms), a.next)
redis.call('HSET', ticket, 'status', 'retrying', 'attempts', a.attempts, 'last_error', a.last_error, 'updated_at', now)
redis.call('SPUBLISH', a.channel, a.ticket)
return 1

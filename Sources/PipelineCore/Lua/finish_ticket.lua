#!lua
--[[
  finish_ticket: acks a job and gives its ticket a terminal status without granting (a rejection).

  Input:
    KEYS[1] inflight   the worker's in-flight list
    KEYS[2] ticket     the job's ticket hash
    ARGV[1] taken      the job as taken
    ARGV[2] arguments  JSON: status, reason, attempts, now, channel, ticket, environment?, last_error?,
                       result? (what an `applied` ticket did), transactions? (JSON: a sync's dry
                       run, what it would have done; absent: none)
  Output:
    1 finished, 0 the worker no longer holds the job, -1 its ticket is gone
]]
--- @include "ack_job"

local inflight, ticket = KEYS[1], KEYS[2]
local acked = ackJob(inflight, ticket, ARGV[1])
if acked ~= 1 then return acked end
local a = cjson.decode(ARGV[2])
redis.call('HSET', ticket, 'status', a.status, 'reason', a.reason, 'attempts', a.attempts,
  'transactions', a.transactions or '[]', 'updated_at', a.now)
if a.environment then redis.call('HSET', ticket, 'environment', a.environment) end
if a.result then redis.call('HSET', ticket, 'result', a.result) end
if a.last_error then
  redis.call('HSET', ticket, 'last_error', a.last_error)
else
  redis.call('HDEL', ticket, 'last_error')
end
redis.call('SPUBLISH', a.channel, a.ticket)
return 1

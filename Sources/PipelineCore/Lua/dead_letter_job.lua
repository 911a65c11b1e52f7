#!lua
--[[
  dead_letter_job: acks a job and moves it to the dead letters; the ticket (if it still exists)
  shows `dead` with the reason.

  Input:
    KEYS[1] inflight   the worker's in-flight list
    KEYS[2] dead       the dead letters (list)
    KEYS[3] ticket     optional: the job's ticket hash (may be gone; absent for a job without a
                       ticket, or whose ticket lies in another bucket)
    ARGV[1] taken      the job as taken
    ARGV[2] arguments  JSON: entry (the dead letter), reason, attempts, now, channel, ticket, last_error
  Output:
    1 dead-lettered, 0 the worker no longer holds the job
]]
local inflight, dead, ticket = KEYS[1], KEYS[2], KEYS[3]
if redis.call('LREM', inflight, 1, ARGV[1]) == 0 then return 0 end
local a = cjson.decode(ARGV[2])
redis.call('LPUSH', dead, a.entry)
if ticket and redis.call('EXISTS', ticket) == 1 then
  redis.call('HSET', ticket, 'status', 'dead', 'reason', a.reason, 'attempts', a.attempts, 'last_error', a.last_error,
    'updated_at', a.now)
  redis.call('SPUBLISH', a.channel, a.ticket)
end
return 1

#!lua
--[[
  forward_job: acks jobs from the worker's in-flight list and pushes each one's next form onto
  its next stage's queue, setting fields on its ticket: one job, or a batch of the worker's jobs
  (each moves or not on its own, as if alone).

  Input:
    KEYS[1]       inflight   the worker's in-flight list
    KEYS[2i]      queue      job i's next queue
    KEYS[2i+1]    ticket     job i's ticket hash
    ARGV[1]       taken      the first job as taken (job i's: ARGV[3i-2])
    ARGV[2]       next       its next form (ARGV[3i-1])
    ARGV[3]       fields     JSON: its field/value pairs for its ticket, an array (ARGV[3i])
    (the jobs as they are, not inside a JSON document: written and read once, not escaped again)
  Output:
    per job: 1 moved, 0 the worker no longer holds it, -1 its ticket is gone
]]
--- @include "ack_job"

local inflight = KEYS[1]
local results = {}
for i = 1, #ARGV / 3 do
  local queue, ticket = KEYS[2 * i], KEYS[2 * i + 1]
  results[i] = ackJob(inflight, ticket, ARGV[3 * i - 2])
  if results[i] == 1 then
    redis.call('LPUSH', queue, ARGV[3 * i - 1])
    local fields = cjson.decode(ARGV[3 * i])
    if #fields > 0 then redis.call('HSET', ticket, unpack(fields)) end
  end
end
return results

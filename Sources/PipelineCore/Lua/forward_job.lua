#!lua
--[[
  forward_job: acks jobs from the worker's in-flight list and pushes each one's next form onto
  its next stage's queue, setting fields on its ticket: one job, or a batch of the worker's jobs
  (each moves or not on its own, as if alone).

  Input:
    KEYS[1]       inflight   the worker's in-flight list
    KEYS[2i]      queue      job i's next queue
    KEYS[2i+1]    ticket     job i's ticket hash
    ARGV[1] arguments        JSON: jobs = [{taken (as taken), next, fields (field/value pairs for the ticket)}]
  Output:
    per job: 1 moved, 0 the worker no longer holds it, -1 its ticket is gone
]]
--- @include "ack_job"

local inflight = KEYS[1]
local a = cjson.decode(ARGV[1])
local results = {}
for i, job in ipairs(a.jobs) do
  local queue, ticket = KEYS[2 * i], KEYS[2 * i + 1]
  results[i] = ackJob(inflight, ticket, job.taken)
  if results[i] == 1 then
    redis.call('LPUSH', queue, job.next)
    if #job.fields > 0 then redis.call('HSET', ticket, unpack(job.fields)) end
  end
end
return results

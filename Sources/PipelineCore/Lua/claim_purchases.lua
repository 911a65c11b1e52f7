#!lua
--[[
  claim_purchases: dedupe stage: for each job, claims each grant unit for its ticket
  (`SET … NX`) and forwards the job to grant: one job, or a batch of the worker's jobs (each as
  if alone). A unit already claimed by the same ticket (a redelivered job) stays claimed:
  nothing is lost.

  Input:
    KEYS[1]   inflight     the worker's in-flight list
    KEYS[2]   grantQueue   the grant stage's queue
    KEYS[3…]  per job: its ticket hash, then its `units` claim keys (`txn:<unit>`)
    ARGV[1] arguments      JSON: jobs = [{taken, next, ticket, units (how many claim keys)}]
  Output:
    per job: 1 moved, 0 the worker no longer holds it, -1 its ticket is gone
]]
--- @include "ack_job"

local inflight, grantQueue = KEYS[1], KEYS[2]
local a = cjson.decode(ARGV[1])
local results = {}
local cursor = 3
for i, job in ipairs(a.jobs) do
  local units = tonumber(job.units)
  results[i] = ackJob(inflight, KEYS[cursor], job.taken)
  if results[i] == 1 then
    for k = cursor + 1, cursor + units do
      redis.call('SET', KEYS[k], job.ticket, 'NX')
    end
    redis.call('LPUSH', grantQueue, job.next)
  end
  cursor = cursor + 1 + units
end
return results

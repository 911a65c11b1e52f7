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
    ARGV[1]…ARGV[4]        the first job's taken (as taken), next (its grant job), ticket (its id),
                           units (how many claim keys); job i's in ARGV[4i-3…4i]: the jobs as they
                           are, not inside a JSON document
  Output:
    per job: 1 moved, 0 the worker no longer holds it, -1 its ticket is gone
]]
--- @include "ack_job"

local inflight, grantQueue = KEYS[1], KEYS[2]
local results = {}
local cursor = 3
for i = 1, #ARGV / 4 do
  local taken, nextJob, ticket, units = ARGV[4 * i - 3], ARGV[4 * i - 2], ARGV[4 * i - 1], tonumber(ARGV[4 * i])
  results[i] = ackJob(inflight, KEYS[cursor], taken)
  if results[i] == 1 then
    for k = cursor + 1, cursor + units do
      redis.call('SET', KEYS[k], ticket, 'NX')
    end
    redis.call('LPUSH', grantQueue, nextJob)
  end
  cursor = cursor + 1 + units
end
return results

--[[
  ackJob(inflight, ticketKey, taken): the start of every step that ends a job a worker holds.
  Returns -1 when the ticket hash is gone (nothing moves; the caller dead-letters the job),
  0 when the worker no longer holds the job (the reaper took it back: nothing moves), and 1
  once the job is off the worker's in-flight list (acknowledged).
]]
local function ackJob(inflight, ticketKey, taken)
  if redis.call('EXISTS', ticketKey) == 0 then return -1 end
  if redis.call('LREM', inflight, 1, taken) == 0 then return 0 end
  return 1
end

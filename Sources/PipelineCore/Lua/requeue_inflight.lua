#!lua
--[[
  requeue_inflight: a worker stopping gracefully hands its unfinished jobs back to the front of
  its queue and leaves the worker set.

  Input:
    KEYS[1] inflight   the worker's in-flight list
    KEYS[2] queue      its stage's queue
    KEYS[3] workers    the worker set (zset)
    ARGV[1] arguments  JSON: member (the worker's entry in `workers`)
  Output:
    how many jobs went back
]]
local inflight, queue, workers = KEYS[1], KEYS[2], KEYS[3]
local a = cjson.decode(ARGV[1])
local moved = 0
while true do
  local payload = redis.call('LPOP', inflight)
  if not payload then break end
  redis.call('RPUSH', queue, payload)
  moved = moved + 1
end
redis.call('ZREM', workers, a.member)
return moved

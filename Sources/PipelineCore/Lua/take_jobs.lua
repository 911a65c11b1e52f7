#!lua
--[[
  take_jobs: a worker with free slots takes up to `max` jobs at once, oldest first, from its
  stage's queue into its own in-flight list: what BLMOVE does for one, without blocking. The
  worker blocks (BLMOVE) only when this finds the queue empty.

  Input:
    KEYS[1] queue       the stage's queue (list)
    KEYS[2] inflight    the worker's in-flight list
    ARGV[1] arguments   JSON: max (how many at most)
  Output:
    the jobs taken, oldest first (none when the queue is empty)
]]
local queue, inflight = KEYS[1], KEYS[2]
local a = cjson.decode(ARGV[1])
local taken = {}
for i = 1, tonumber(a.max) do
  local job = redis.call('LMOVE', queue, inflight, 'RIGHT', 'LEFT')
  if not job then break end
  taken[i] = job
end
return taken

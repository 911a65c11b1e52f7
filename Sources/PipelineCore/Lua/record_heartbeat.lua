#!lua
--[[
  record_heartbeat: a worker says it lives, at Redis's time (not its host's): a worker whose
  clock is behind keeps its jobs, one whose clock is ahead gives them back within the lease.

  Input:
    KEYS[1] workers    the worker set (zset: member → last heartbeat, ms)
    ARGV[1] arguments  JSON: member, now? (a test's pinned time)
  Output:
    the time recorded (ms)
]]
--- @include "redis_now"

local workers = KEYS[1]
local a = cjson.decode(ARGV[1])
local now = redisNow(a.now)
redis.call('ZADD', workers, now, a.member)
return now

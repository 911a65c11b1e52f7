#!lua
--[[
  trim_dead_letters: keeps a bucket's dead letters bounded: the newest `max` stay, and none older
  than `max_age_ms` (by its `at`, ms); at most `limit` are dropped a call, oldest first, and
  returned, so the caller counts and logs each one (its ticket and reason) before it is gone from
  sight. Time is Redis's own (TIME).

  Input:
    KEYS[1] dead       the bucket's dead letters (list, newest first)
    ARGV[1] arguments  JSON: max, max_age_ms, limit, now? (a test's pinned time)
  Output:
    the entries dropped, oldest first
]]
--- @include "redis_now"

local dead = KEYS[1]
local a = cjson.decode(ARGV[1])
local now = redisNow(a.now)
local max, oldest, limit = tonumber(a.max), now - tonumber(a.max_age_ms), tonumber(a.limit)

-- Whether the oldest entry is past its age (an entry that is not JSON with `at` is kept by age).
local function tooOld(entry)
  local ok, letter = pcall(cjson.decode, entry)
  return ok and type(letter) == 'table' and type(letter.at) == 'number' and letter.at < oldest
end

local dropped = {}
while #dropped < limit do
  local length = redis.call('LLEN', dead)
  if length == 0 then break end
  local last = redis.call('LINDEX', dead, -1)
  if length <= max and not tooOld(last) then break end
  dropped[#dropped + 1] = redis.call('RPOP', dead)
end
return dropped

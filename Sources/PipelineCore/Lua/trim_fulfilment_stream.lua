#!lua
--[[
  trim_fulfilment_stream: keeps a bucket's fulfilment stream bounded without dropping an event a
  consumer still needs: entries older than `retention_ms` are trimmed, but never one a consumer
  group has not had (below every group's last delivered id and its oldest pending entry: the
  webhook router's group and every backend's), nor one past `floor_ms` (the refund sweep's cursor
  on this stream, read by the caller). Approximate (whole macro nodes) and at most `limit`
  entries a call, so one call never holds Redis long. Time is Redis's own (TIME).

  Input:
    KEYS[1] stream     the bucket's fulfilment stream
    ARGV[1] arguments  JSON: retention_ms, floor_ms? (ms), limit, now? (a test's pinned time)
  Output:
    {entries trimmed, the id below which it trimmed}
]]
--- @include "redis_now"

local stream = KEYS[1]
local a = cjson.decode(ARGV[1])
local now = redisNow(a.now)

-- Stream ids compared as {ms, seq}.
local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return {tonumber(ms), tonumber(seq)}
end
local function lower(x, y)
  if x[1] ~= y[1] then return x[1] < y[1] and x or y end
  return x[2] <= y[2] and x or y
end

local below = {now - tonumber(a.retention_ms), 0}
if a.floor_ms ~= nil and a.floor_ms ~= cjson.null then below = lower(below, {tonumber(a.floor_ms), 0}) end
local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', stream)
if ok then
  for _, group in ipairs(groups) do
    local fields = {}
    for i = 1, #group, 2 do fields[group[i]] = group[i + 1] end
    -- Every entry after the last delivered one is still to be had: keep from it on (it included).
    below = lower(below, parse(fields['last-delivered-id']))
    local pending = redis.call('XPENDING', stream, fields['name'])
    if pending[2] then below = lower(below, parse(pending[2])) end
  end
end
if below[1] <= 0 then return {0, '0-0'} end
local minID = below[1] .. '-' .. below[2]
local trimmed = redis.call('XTRIM', stream, 'MINID', '~', minID, 'LIMIT', tonumber(a.limit))
return {trimmed, minID}

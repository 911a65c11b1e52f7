#!lua
--[[
  index_user_events: `iapctl user index-events`: one page of a bucket's fulfilment stream (the
  entries after `after`, at most `count`) indexed in the bucket's `user-events` as
  `append_event` indexes a new entry: for a stream written before the index existed. A member
  already there changes nothing, and each user keeps their newest 100, so a page indexed twice,
  or beside the pipeline writing new entries, leaves the index as if each entry had been indexed
  when written.

  Input:
    KEYS[1] stream     the bucket's fulfilment stream
    KEYS[2] events     the bucket's `user-events`
    ARGV[1] arguments  JSON: after (an entry id, exclusive; `-`: from the first), count
  Output:
    {entries read, the last id read (`` when none)}
]]
--- @include "append_event"

local stream, events = KEYS[1], KEYS[2]
local a = cjson.decode(ARGV[1])
local start = a.after == '-' and '-' or '(' .. a.after
local entries = redis.call('XRANGE', stream, start, '+', 'COUNT', tonumber(a.count))
local last = ''
for _, entry in ipairs(entries) do
  indexUserEvent(events, entry[1], fieldsByName(entry[2]))
  last = entry[1]
end
return {#entries, last}

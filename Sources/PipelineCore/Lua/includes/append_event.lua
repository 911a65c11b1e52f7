--[[
  appendEvent(stream, events, fields): one entry on the fulfilment stream (`fields`: name, value,
  … with `event` and `user_id`), and in the same step what goes with it: `events` is a table,
  `index` the bucket's index of each user's events (`user-events`, a zset of score 0 read by lex
  range per user) and `figures` the day's figures (countFigures; absent in a script that writes
  no counted entry). A member of the index:

    <the user's length, 3 digits><user> NUL <ms, 20 digits>-<seq, 20 digits> NUL <event>
    NUL <original_transaction_id> NUL <unit> NUL <product_id>

  The length makes a user's range exact whatever the id holds; the padded entry id orders a
  user's members as the stream does. A user keeps the newest 100 in each bucket (the oldest
  goes; `RedisKeys.userEventsCap` says the same to Swift): a bounded page for the console, never
  a read of the stream. An entry naming no user (`user_id` empty) is not indexed. And in the same
  step the entry's figures are counted (countFigures, in `events.figures`). Returns the entry's
  id.
]]
--- @include "count_figures"

-- What each of the user's members starts with, and the lex range (min, max) of them all.
local function userEventsPrefix(user)
  return string.format('%03d', #user) .. user .. '\0'
end

local function userEventsRange(user)
  local prefix = userEventsPrefix(user)
  return '[' .. prefix, '(' .. string.sub(prefix, 1, -2) .. '\1'
end

-- Indexes entry `id` (`f`: its fields by name) for its user, keeping the user's newest 100;
-- nothing for an entry naming no user. The same member again changes nothing.
local function indexUserEvent(events, id, f)
  local user = f.user_id or ''
  if user == '' then return end
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  redis.call('ZADD', events, 0, userEventsPrefix(user) .. string.rep('0', 20 - #ms) .. ms .. '-'
    .. string.rep('0', 20 - #seq) .. seq .. '\0' .. (f.event or '') .. '\0' .. (f.original_transaction_id or '')
    .. '\0' .. (f.unit or '') .. '\0' .. (f.product_id or ''))
  local first, past = userEventsRange(user)
  local over = redis.call('ZLEXCOUNT', events, first, past) - 100
  if over > 0 then
    redis.call('ZREM', events, unpack(redis.call('ZRANGE', events, first, past, 'BYLEX', 'LIMIT', 0, over)))
  end
end

-- An entry's fields (name, value, …) by name.
local function fieldsByName(fields)
  local f = {}
  for i = 1, #fields - 1, 2 do f[fields[i]] = fields[i + 1] end
  return f
end

local function appendEvent(stream, events, fields)
  local id = redis.call('XADD', stream, '*', unpack(fields))
  local f = fieldsByName(fields)
  indexUserEvent(events.index, id, f)
  countFigures(events.figures, f)
  return id
end

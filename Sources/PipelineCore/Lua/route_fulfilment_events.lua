#!lua
--[[
  route_fulfilment_events: `iap-webhook`'s housekeeping, for one destination: reads the next
  fulfilment entries for the destination's consumer group (XREADGROUP; the group is created at
  the stream's start the first time), appends each entry its filter admits to its user's list of
  events to deliver, queues a delivery job for a user who has none (one job per user, bucket and
  destination, with its ticket `webhook:<user>`, `<bucket>.webhook:<user>` with several buckets,
  `webhook@<destination>:<user>` for a destination other than `default`), and acknowledges the
  entries (XACK), those the filter turns away too: all in this one step, so a crash can neither
  lose an entry nor leave one pending (nothing is ever left for XAUTOCLAIM to claim). An entry
  without a user goes to the user `_`.

  The filter: `apps` (bundle ids, the entry's `bundle_id`), `environments` (`Production`,
  `Sandbox`: its `environment`), `events` (its `event`), each a list or absent (any). An entry
  passes a list when its field is one of it, or when it has no such field (an operator's grant
  names no environment): it is turned away only by a field it has.

  Each user's list and ticket are keys this script learns by reading the entries: it first looks
  at what the group will read next (XRANGE after the group's last delivered id) and, when a
  user's keys are not declared in `users`, answers {-2, users} having changed nothing but the
  group's creation; the caller declares them and calls again.

  Input:
    KEYS[1] stream         the fulfilment stream
    KEYS[2] webhookQueue   the webhook stage's queue
    KEYS[3] busy           the destination's busy set (`webhook:busy`, `webhook:to:<name>:busy`)
    KEYS[4] destinations   the bucket's `webhook:destinations` (the destination's name is added)
    KEYS[5…] per user, as `users` names them: the destination's list of the user's events, the
             user's delivery ticket
    ARGV[1] arguments      JSON: group, consumer, count, now, ttl (s), destination (its name),
                           filter? ({apps?, environments?, events?}), id_prefix (what an event id
                           starts with: `<bucket>.` with several buckets, whose streams may give
                           one entry id twice; else empty), ticket_prefix (a delivery ticket's id
                           before the user: `webhook:`, `<bucket>.webhook@<name>:`), users? (user →
                           {events, ticket}: KEYS indexes)
  Output:
    how many entries were read (routed or turned away); {-2, users (JSON array)} declare these
    users' keys and call again
]]
--- @include "new_ticket"
local stream, webhookQueue, busy, destinations = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local a = cjson.decode(ARGV[1])
local users = a.users or {}

-- The filter's lists as sets (absent: any).
local function setOf(list)
  if type(list) ~= 'table' then return nil end
  local set = {}
  for _, v in ipairs(list) do set[v] = true end
  return set
end
local filter = a.filter or {}
local admitted = {bundle_id = setOf(filter.apps), environment = setOf(filter.environments), event = setOf(filter.events)}

-- The group's last delivered id, creating the group at the stream's start (every event is
-- delivered) when there is none.
local function lastDelivered()
  local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', stream)
  if ok then
    for _, group in ipairs(groups) do
      local fields = {}
      for i = 1, #group, 2 do fields[group[i]] = group[i + 1] end
      if fields.name == a.group then return fields['last-delivered-id'] end
    end
  end
  redis.call('XGROUP', 'CREATE', stream, a.group, '0', 'MKSTREAM')
  return '0-0'
end

local function userOf(fields)
  for i = 1, #fields, 2 do
    if fields[i] == 'user_id' and fields[i + 1] ~= '' then return fields[i + 1] end
  end
  return '_'
end

-- Whether the filter admits an entry (its fields as a flat list): no field it has is outside a list.
local function passes(fields)
  for i = 1, #fields, 2 do
    local set = admitted[fields[i]]
    if set and not set[fields[i + 1]] then return false end
  end
  return true
end

local upcoming = redis.call('XRANGE', stream, '(' .. lastDelivered(), '+', 'COUNT', tonumber(a.count))
if #upcoming == 0 then return 0 end
local missing, seen = {}, {}
for _, entry in ipairs(upcoming) do
  local user = userOf(entry[2])
  if passes(entry[2]) and not users[user] and not seen[user] then
    seen[user] = true
    missing[#missing + 1] = user
  end
end
if #missing > 0 then return {-2, cjson.encode(missing)} end

redis.call('SADD', destinations, a.destination)
local named = nil
if a.destination ~= 'default' then named = a.destination end
local read = redis.call('XREADGROUP', 'GROUP', a.group, a.consumer, 'COUNT', #upcoming, 'STREAMS', stream, '>')
local routed = 0
for _, entry in ipairs(read[1][2]) do
  local id, list = entry[1], entry[2]
  if passes(list) then
    local fields = {}
    for i = 1, #list, 2 do fields[list[i]] = list[i + 1] end
    local user = userOf(list)
    local events, ticket = KEYS[users[user].events], KEYS[users[user].ticket]
    redis.call('RPUSH', events, cjson.encode({id = a.id_prefix .. id, fields = fields}))
    if redis.call('SADD', busy, user) == 1 then
      newTicket(ticket, user, a.now, tonumber(a.ttl), {'source', 'webhook'})
      redis.call('LPUSH', webhookQueue, cjson.encode({ticket = a.ticket_prefix .. user, stage = 'webhook', user_id = user,
        attempts = 0, enqueued_at = tonumber(a.now), destination = named}))
    end
  end
  redis.call('XACK', stream, a.group, id)
  routed = routed + 1
end
return routed

#!lua
--[[
  record_retention_answer: the intake's answer to one of Apple's real-time retention requests,
  recorded once by the request's `requestIdentifier`: a request seen before records nothing (a
  replay). The answer is a `retention_offered` entry for the subscription's owner (countFigures:
  `retention_offered:<rule>`), and the subscription record keeps the latest answer
  (`retention_rule`, `retention_message`, `retention_offer`, `retention_offered_at`), so that a
  period bought with a retention offer after it can be counted as saved by its rule.

  Input:
    KEYS[1] request       `retention-request:<original>:<request id>` (string; kept `ttl` ms)
    KEYS[2] stream        the fulfilment stream
    KEYS[3] events        the bucket's `user-events` (appendEvent)
    KEYS[4] figures       the bucket's `figures:<day>` (the day of `now`)
    KEYS[5] subscription  `subscription:<original>`
    ARGV[1] arguments     JSON: now, ttl, user (the owner), event (the entry's fields but
                          `user_id`: event, retention_rule (`none` for no rule), …), offer (what
                          the record keeps as `retention_offer`: the offer id or the alternate
                          product, '' for the message alone)
  Output:
    1 recorded, 0 the request was seen before (nothing recorded)
]]
--- @include "add_event"

local request, stream, subscription = KEYS[1], KEYS[2], KEYS[5]
local events = {index = KEYS[3], figures = KEYS[4]}
local a = cjson.decode(ARGV[1])
if not redis.call('SET', request, a.now, 'NX', 'PX', a.ttl) then return 0 end
addEvent(stream, events, a.event, a.user)
if a.event.retention_rule ~= 'none' and redis.call('EXISTS', subscription) == 1 then
  redis.call('HSET', subscription, 'retention_rule', a.event.retention_rule, 'retention_message', a.event.retention_message,
    'retention_offer', a.offer, 'retention_offered_at', a.now)
end
return 1

#!lua
--[[
  record_notification: notify stage, a notification that grants nothing now: keeps it (on the
  original transaction's list, newest first, at most `keep`; or, for a purchase whose account is
  unknown, in the unclaimed hash until a user submits it), adds the normalised `event` it means,
  if any, to the fulfilment stream (for the owner of its original transaction, when known, or
  for each user named in `users`),
  finishes the ticket with `result`; ack.

  Input:
    KEYS[1] inflight   the worker's in-flight list
    KEYS[2] ticket     the job's ticket hash
    KEYS[3] stream     the fulfilment stream
    KEYS[4] events     the bucket's `user-events` (appendEvent)
    KEYS[5] figures    the bucket's `figures:<day>` (countFigures: the day of `now`)
    KEYS[6] record     optional: `notifications:<original>` (list) or `unclaimed` (hash)
    KEYS[7] owner      optional, with the list: `owner:<original>`
    KEYS[8] grant      optional, with the list: the purchase's `grant:<unit>`, for a refund
                       request (CONSUMPTION_REQUEST: a granted purchase's record keeps the
                       request's reason) or its outcome (REFUND_DECLINED: the event carries the
                       reason kept: countFigures counts the outcome by it)
    ARGV[1] taken      the job as taken
    ARGV[2] arguments  JSON: ticket, now, channel, result, entry, keep, transaction_id? (the
                       unclaimed hash's field; absent: KEYS[5] is the list), event? (the stream
                       entry's fields but `user_id`), users? (the event goes to each of these users
                       instead of the owner: an Apple Account's, for RESCIND_CONSENT; empty: to nobody named),
                       refund_request_reason? (with KEYS[8]: a CONSUMPTION_REQUEST's), refund_rule?
                       (the rule that answered it: kept on the record, on the request's event, and
                       carried by the outcome's event as refund_request_reason is)
  Output:
    1 recorded, 0 the worker no longer holds the job, -1 its ticket is gone
]]
--- @include "ack_job"
--- @include "add_event"

local inflight, ticket, stream, record, owner, grant = KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[7], KEYS[8]
local events = {index = KEYS[4], figures = KEYS[5]}
local acked = ackJob(inflight, ticket, ARGV[1])
if acked ~= 1 then return acked end
local a = cjson.decode(ARGV[2])
if record then
  if a.transaction_id then
    redis.call('HSET', record, a.transaction_id, a.entry)
  else
    redis.call('LPUSH', record, a.entry)
    redis.call('LTRIM', record, 0, tonumber(a.keep) - 1)
  end
end
-- A refund request: the granted purchase keeps why it was asked for; its outcome says it.
if grant and redis.call('EXISTS', grant) == 1 then
  if a.refund_request_reason then
    redis.call('HSET', grant, 'refund_request_reason', a.refund_request_reason, 'refund_requested_at', a.now)
    -- The rule that answered it (none: not answered), so that Apple's outcome is counted by rule too.
    if a.refund_rule then
      redis.call('HSET', grant, 'refund_rule', a.refund_rule)
    else
      redis.call('HDEL', grant, 'refund_rule')
    end
  elseif a.event then
    local kept = redis.call('HMGET', grant, 'refund_request_reason', 'refund_rule')
    a.event.refund_request_reason = kept[1] or nil
    a.event.refund_rule = kept[2] or nil
  end
end
if a.event and a.users and #a.users > 0 then
  for _, user in ipairs(a.users) do addEvent(stream, events, a.event, user) end
elseif a.event then
  addEvent(stream, events, a.event, (owner and redis.call('GET', owner)) or '')
end
redis.call('HSET', ticket, 'status', 'applied', 'result', a.result, 'attempts', '1', 'updated_at', a.now)
redis.call('SPUBLISH', a.channel, a.ticket)
return 1

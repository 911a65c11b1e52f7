#!lua
--[[
  reinstate_grant: notify stage, REFUND_REVERSED: undoes a revocation once, in whole or in part
  (one `reinstated` entry on the fulfilment stream with the `reinstated_quantity`; the owner's
  count of refunds one fewer, or their prorated refunds less what the unit counted), or forgets
  a refund remembered before the grant; finishes the ticket; acks. For a subscription's period
  (`subscription`), the record's status as the transaction now says.

  The grant's owner is data: the caller declares the keys of the owner it expects (`owner`); when
  the record names another, the script answers {-2, owner} and changes nothing.

  Input:
    KEYS[1] to KEYS[13]         as `revoke_grant`'s (one Swift type, `RefundStepCall`, declares
                                both): inflight, ticket, record, refunded, stream, events, the
                                day's figures; then the owner's refunds and prorated refunds; for
                                a subscription its record, the re-check schedule, the owner's
                                subscriptions and the bucket's `subscribers`
    ARGV[1] taken               the job as taken
    ARGV[2] arguments           JSON: ticket, now, channel, notification, owner?, subscription?, recheck?
  Output:
    {1, result} `reinstated`, `refund_forgotten`, `not_revoked`; {0} the worker no longer holds
    the job; {-1} its ticket is gone; {-2, owner} declare that owner's keys and call again
]]
--- @include "ack_for_owner"
--- @include "grant_entry"
--- @include "apply_subscription"

local inflight, ticket, record, refunded, stream = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local events, refunds, prorated = {index = KEYS[6], figures = KEYS[7]}, KEYS[8], KEYS[9]
local a = cjson.decode(ARGV[2])
local acked, owner = ackForOwner(inflight, ticket, record, ARGV[1], a.owner)
if acked == -2 then return {-2, owner} end
if acked ~= 1 then return {acked} end

-- Takes `by` off a count, never below 0.
local function lower(count, by)
  local now = tonumber(redis.call('GET', count) or '0')
  if now > 0 and by > 0 then redis.call('DECRBY', count, math.min(now, by)) end
end

local result = 'not_revoked'
local whole = owner and redis.call('HEXISTS', record, 'revoked_at') == 1
local part = owner and not whole and (tonumber(redis.call('HGET', record, 'revoked_quantity')) or 0) > 0
if whole or part then
  local quantity = redis.call('HGET', record, 'revoked_quantity') or redis.call('HGET', record, 'quantity') or '1'
  if whole then lower(refunds, 1) else lower(prorated, tonumber(redis.call('HGET', record, 'revocation_percentage')) or 0) end
  redis.call('HDEL', record, 'revoked_at', 'revocation_reason', 'revocation_type', 'revoked_quantity', 'revocation_percentage',
    'partially_revoked_at')
  redis.call('HSET', record, 'reinstated_at', a.now)
  appendEvent(stream, events, (grantEntry(record, {'event', 'reinstated', 'source', 'notification'},
    {'reinstated_at', a.now, 'reinstated_quantity', quantity, 'notification', a.notification})))
  if whole and a.subscription then
    a.subscription.user_id = owner
    applySubscription({subscription = KEYS[10], rechecks = KEYS[11], userSubscriptions = KEYS[12], stream = stream,
      events = events, subscribers = KEYS[13]},
      a.subscription, a.now, a.recheck)
  end
  result = 'reinstated'
elseif redis.call('DEL', refunded) == 1 then
  result = 'refund_forgotten'
end
redis.call('HSET', ticket, 'status', 'applied', 'result', result, 'attempts', '1', 'updated_at', a.now)
redis.call('SPUBLISH', a.channel, a.ticket)
return {1, result}

#!lua
--[[
  reinstate_grant: notify stage, REFUND_REVERSED: undoes a revocation once (one `reinstated`
  entry on the fulfilment stream, one refund fewer in the owner's count), or forgets a refund
  remembered before the grant; finishes the ticket; acks. For a subscription's period
  (`subscription`), the record's status as the transaction now says.

  The grant's owner is data: the caller declares the keys of the owner it expects (`owner`); when
  the record names another, the script answers {-2, owner} and changes nothing.

  Input:
    KEYS[1] inflight            the worker's in-flight list
    KEYS[2] ticket              the notification's ticket hash
    KEYS[3] record              `grant:<unit>`
    KEYS[4] refunded            `refunded:<unit>`
    KEYS[5] stream              the fulfilment stream
    KEYS[6] refunds             `refunds:<owner>`
    KEYS[7] subscription        `subscription:<original>` (the unit's subscription, if any)
    KEYS[8] rechecks            the re-check schedule
    KEYS[9] ownerSubscriptions  `user-subscriptions:<owner>`
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
local a = cjson.decode(ARGV[2])
local acked, owner = ackForOwner(inflight, ticket, record, ARGV[1], a.owner)
if acked == -2 then return {-2, owner} end
if acked ~= 1 then return {acked} end

local result = 'not_revoked'
if owner and redis.call('HEXISTS', record, 'revoked_at') == 1 then
  redis.call('HDEL', record, 'revoked_at', 'revocation_reason', 'revocation_type')
  redis.call('HSET', record, 'reinstated_at', a.now)
  redis.call('XADD', stream, '*', unpack((grantEntry(record, {'event', 'reinstated', 'source', 'notification'},
    {'reinstated_at', a.now, 'notification', a.notification}))))
  if tonumber(redis.call('GET', KEYS[6]) or '0') > 0 then redis.call('DECR', KEYS[6]) end
  if a.subscription then
    a.subscription.user_id = owner
    applySubscription({subscription = KEYS[7], rechecks = KEYS[8], userSubscriptions = KEYS[9], stream = stream},
      a.subscription, a.now, a.recheck)
  end
  result = 'reinstated'
elseif redis.call('DEL', refunded) == 1 then
  result = 'refund_forgotten'
end
redis.call('HSET', ticket, 'status', 'applied', 'result', result, 'attempts', '1', 'updated_at', a.now)
redis.call('SPUBLISH', a.channel, a.ticket)
return {1, result}

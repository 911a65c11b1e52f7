#!lua
--[[
  revoke_grant: notify stage, REFUND or REVOKE: revokes the unit's grant once (the record gets
  `revoked_at`, `revocation_reason`, `revocation_type`; one `revoked` entry on the fulfilment
  stream for the owner, whose count of refunds goes up by one), or, when nothing is granted yet,
  remembers the refund so the grant stage grants nothing; finishes the notification's ticket; acks.
  For a subscription's period (`subscription`), the record becomes `revoked` (applySubscription,
  only when it is the latest period).

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
    ARGV[2] arguments           JSON: ticket, now, channel, notification, revocation_reason,
                                revocation_type, owner?, subscription?, recheck?
  Output:
    {1, result} `revoked`, `already_revoked`, `refund_remembered`; {0} the worker no longer holds
    the job; {-1} its ticket is gone; {-2, owner} declare that owner's keys and call again
]]
--- @include "apply_subscription"

local inflight, ticket, record, refunded, stream = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local a = cjson.decode(ARGV[2])
if redis.call('EXISTS', ticket) == 0 then return {-1} end
local owner = redis.call('HGET', record, 'user_id')
if owner and owner ~= a.owner then return {-2, owner} end
if redis.call('LREM', inflight, 1, ARGV[1]) == 0 then return {0} end

local result
if not owner then
  redis.call('SET', refunded, a.now)
  result = 'refund_remembered'
elseif redis.call('HEXISTS', record, 'revoked_at') == 1 then
  result = 'already_revoked'
else
  redis.call('HSET', record, 'revoked_at', a.now, 'revocation_reason', a.revocation_reason,
    'revocation_type', a.revocation_type)
  redis.call('HDEL', record, 'reinstated_at')
  local g = redis.call('HMGET', record, 'ticket', 'user_id', 'product_id', 'quantity', 'transaction_id',
    'original_transaction_id', 'environment', 'unit', 'granted_at')
  redis.call('XADD', stream, '*', 'event', 'revoked', 'source', 'notification', 'ticket', g[1],
    'user_id', g[2], 'product_id', g[3], 'quantity', g[4], 'transaction_id', g[5],
    'original_transaction_id', g[6], 'environment', g[7], 'unit', g[8], 'granted_at', g[9],
    'revoked_at', a.now, 'revocation_reason', a.revocation_reason, 'revocation_type', a.revocation_type,
    'notification', a.notification)
  redis.call('INCR', KEYS[6])
  if a.subscription then
    a.subscription.user_id = owner
    applySubscription({subscription = KEYS[7], rechecks = KEYS[8], userSubscriptions = KEYS[9], stream = stream},
      a.subscription, a.now, a.recheck)
  end
  result = 'revoked'
end
redis.call('HSET', ticket, 'status', 'applied', 'result', result, 'attempts', '1', 'updated_at', a.now)
redis.call('PUBLISH', a.channel, a.ticket)
return {1, result}

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
                                revocation_type, owner?, subscription?, recheck?, source? (the
                                `revoked` entry's: `notification`, or `refund_history`)
  Output:
    {1, result} `revoked`, `already_revoked`, `refund_remembered`; {0} the worker no longer holds
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
  redis.call('XADD', stream, '*', unpack((grantEntry(record, {'event', 'revoked', 'source', a.source or 'notification'},
    {'revoked_at', a.now, 'revocation_reason', a.revocation_reason, 'revocation_type', a.revocation_type,
      'notification', a.notification}))))
  redis.call('INCR', KEYS[6])
  if a.subscription then
    a.subscription.user_id = owner
    applySubscription({subscription = KEYS[7], rechecks = KEYS[8], userSubscriptions = KEYS[9], stream = stream},
      a.subscription, a.now, a.recheck)
  end
  result = 'revoked'
end
redis.call('HSET', ticket, 'status', 'applied', 'result', result, 'attempts', '1', 'updated_at', a.now)
redis.call('SPUBLISH', a.channel, a.ticket)
return {1, result}

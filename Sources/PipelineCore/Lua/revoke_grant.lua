#!lua
--[[
  revoke_grant: notify stage, REFUND or REVOKE: takes back the unit's grant once, in whole or (a
  consumable's `REFUND_PRORATED`) in part, or, when nothing is granted yet, remembers the refund so
  the grant stage grants nothing; finishes the notification's ticket; acks.

  - In whole: the record gets `revoked_at`, `revocation_reason`, `revocation_type`,
    `revoked_quantity` (all of it); one `revoked` entry on the fulfilment stream for the owner
    (with the record's `refund_request_reason` when the customer asked for the refund),
    whose count of refunds goes up by one (less what earlier partial refunds of the unit counted).
    For a subscription's period (`subscription`), the record becomes `revoked` (applySubscription,
    only when it is the latest period).
  - Before the grant: `refunded:<unit>` remembers the refund, `<ms>` (in whole) or
    `<ms>:<percentage>` (a consumable's in part: the grant stage grants the rest).
  - In part (`prorate`, with Apple's `revocation_percentage` in milliunits below 100000): of the
    record's `quantity`, round(quantity x percentage / 100000) units are taken back in all; this
    refund takes back what earlier ones of the unit did not (`revoked_quantity` on the record, the
    entry's `revoked_quantity`), and the rest stays granted. The owner's prorated refunds
    (`refunds-prorated:<owner>`, milliunits) go up by the percentage less what the unit counted
    before. Taking back every unit is a refund in whole.

  The grant's owner is data: the caller declares the keys of the owner it expects (`owner`); when
  the record names another, the script answers {-2, owner} and changes nothing.

  Input:
    KEYS[1] inflight            the worker's in-flight list
    KEYS[2] ticket              the notification's ticket hash
    KEYS[3] record              `grant:<unit>`
    KEYS[4] refunded            `refunded:<unit>`
    KEYS[5] stream              the fulfilment stream
    KEYS[6] events              the bucket's `user-events` (appendEvent)
    KEYS[7] figures             the bucket's `figures:<day>` (countFigures: the day of `now`)
    KEYS[8] refunds             `refunds:<owner>`
    KEYS[9] prorated            `refunds-prorated:<owner>`
    KEYS[10] subscription       `subscription:<original>` (the unit's subscription, if any)
    KEYS[11] rechecks           the re-check schedule
    KEYS[12] ownerSubscriptions `user-subscriptions:<owner>`
    KEYS[13] subscribers        the bucket's `subscribers` (countSubscriber)
    ARGV[1] taken               the job as taken
    ARGV[2] arguments           JSON: ticket, now, channel, notification, revocation_reason,
                                revocation_type, revocation_percentage? (Apple's, milliunits),
                                prorate? (a consumable: the percentage takes back part of it),
                                owner?, subscription?, recheck?, source? (the `revoked` entry's:
                                `notification`, or `refund_history`)
  Output:
    {1, result} `revoked`, `partially_revoked`, `already_revoked` (nothing more to take back),
    `refund_remembered`; {0} the worker no longer holds the job; {-1} its ticket is gone; {-2, owner}
    declare that owner's keys and call again
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

local percentage = tonumber(a.revocation_percentage)

-- The entry's tail: what this refund took back, in Apple's words and in units.
local function revokedEntry(taken)
  local tail = {'revoked_at', a.now, 'revocation_reason', a.revocation_reason, 'revocation_type', a.revocation_type,
    'revoked_quantity', taken, 'notification', a.notification}
  if percentage then
    tail[#tail + 1] = 'revocation_percentage'
    tail[#tail + 1] = percentage
  end
  -- The customer asked for it (CONSUMPTION_REQUEST): why, so the outcome is counted by reason.
  local asked = redis.call('HMGET', record, 'refund_request_reason', 'refund_rule')
  if asked[1] then
    tail[#tail + 1] = 'refund_request_reason'
    tail[#tail + 1] = asked[1]
  end
  -- And the rule that answered it, so the outcome is counted by rule.
  if asked[2] then
    tail[#tail + 1] = 'refund_rule'
    tail[#tail + 1] = asked[2]
  end
  appendEvent(stream, events, (grantEntry(record, {'event', 'revoked', 'source', a.source or 'notification'}, tail)))
end

-- How many units the refund takes back in all: every one, unless a consumable's prorated refund.
local function unitsToTakeBack(quantity)
  if not (a.prorate and percentage and percentage < 100000) then return quantity end
  return math.min(quantity, math.floor(quantity * math.max(percentage, 0) / 100000 + 0.5))
end

local result
if not owner then
  -- A consumable's refund in part remembers its share (`<ms>:<percentage>`: the grant keeps the
  -- rest); one in whole, the time alone, which a later share never overrides.
  local remembered = redis.call('GET', refunded)
  if not (a.prorate and percentage and percentage < 100000) then
    redis.call('SET', refunded, a.now)
  elseif not remembered or string.find(remembered, ':', 1, true) then
    redis.call('SET', refunded, a.now .. ':' .. percentage)
  end
  result = 'refund_remembered'
elseif redis.call('HEXISTS', record, 'revoked_at') == 1 then
  result = 'already_revoked'
else
  local quantity = tonumber(redis.call('HGET', record, 'quantity')) or 1
  local before = tonumber(redis.call('HGET', record, 'revoked_quantity')) or 0
  local counted = tonumber(redis.call('HGET', record, 'revocation_percentage')) or 0
  local target = unitsToTakeBack(quantity)
  if target <= before then
    result = 'already_revoked'
  elseif target < quantity then
    redis.call('HSET', record, 'revoked_quantity', target, 'revocation_percentage', percentage,
      'revocation_reason', a.revocation_reason, 'revocation_type', a.revocation_type, 'partially_revoked_at', a.now)
    revokedEntry(target - before)
    if percentage > counted then redis.call('INCRBY', prorated, percentage - counted) end
    result = 'partially_revoked'
  else
    redis.call('HSET', record, 'revoked_at', a.now, 'revocation_reason', a.revocation_reason,
      'revocation_type', a.revocation_type, 'revoked_quantity', quantity)
    redis.call('HDEL', record, 'reinstated_at', 'revocation_percentage')
    if percentage then redis.call('HSET', record, 'revocation_percentage', percentage) end
    revokedEntry(quantity - before)
    redis.call('INCR', refunds)
    -- What earlier partial refunds of this unit counted is now part of the whole one.
    if counted > 0 then redis.call('DECRBY', prorated, math.min(counted, tonumber(redis.call('GET', prorated) or '0'))) end
    if a.subscription then
      a.subscription.user_id = owner
      applySubscription({subscription = KEYS[10], rechecks = KEYS[11], userSubscriptions = KEYS[12], stream = stream,
        events = events, subscribers = KEYS[13]},
        a.subscription, a.now, a.recheck)
    end
    result = 'revoked'
  end
end
redis.call('HSET', ticket, 'status', 'applied', 'result', result, 'attempts', '1', 'updated_at', a.now)
redis.call('SPUBLISH', a.channel, a.ticket)
return {1, result}

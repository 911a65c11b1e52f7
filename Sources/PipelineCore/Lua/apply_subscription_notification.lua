#!lua
--[[
  apply_subscription_notification: notify stage, a notification that moves a subscription
  without a grant (`EXPIRED`, `DID_FAIL_TO_RENEW`, `GRACE_PERIOD_EXPIRED`,
  `DID_CHANGE_RENEWAL_STATUS`, `RENEWAL_EXTENDED`): applies it to the subscription's record in signed-time order
  (applySubscription, with its entitlement events), adds the normalised `event` it means when it
  applied (for the subscription's owner), keeps it on the original transaction's list (newest
  first, at most `keep`), finishes the ticket with what applying it did; acks.

  Input:
    KEYS[1] inflight            the worker's in-flight list
    KEYS[2] ticket              the notification's ticket hash
    KEYS[3] notifications       `notifications:<original>`
    KEYS[4] stream              the fulfilment stream
    KEYS[5] events              the bucket's `user-events` (appendEvent)
    KEYS[6] subscription        `subscription:<original>`
    KEYS[7] rechecks            the re-check schedule
    KEYS[8] figures             the bucket's `figures:<day>` (countFigures: the day of `now`)
    KEYS[9] subscribers         the bucket's `subscribers` (countSubscriber)
    KEYS[10] userSubscriptions  optional: `user-subscriptions:<user>` when `subscription.user_id` is given
    ARGV[1] taken               the job as taken
    ARGV[2] arguments           JSON: ticket, now, channel, entry, keep, subscription, recheck?, event?
                                (the stream entry's fields but `user_id`)
  Output:
    {1, result} `applied`, `stale`, `older_period`, `not_latest`, `unknown_subscription`;
    {0} the worker no longer holds the job; {-1} its ticket is gone
]]
--- @include "ack_job"
--- @include "apply_subscription"
--- @include "add_event"

local inflight, ticket, notifications, stream = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local events = {index = KEYS[5], figures = KEYS[8]}
local acked = ackJob(inflight, ticket, ARGV[1])
if acked ~= 1 then return {acked} end
local a = cjson.decode(ARGV[2])
local result = applySubscription(
  {subscription = KEYS[6], rechecks = KEYS[7], userSubscriptions = KEYS[10], stream = stream, events = events,
    subscribers = KEYS[9]},
  a.subscription, a.now, a.recheck)
if a.event and result == 'applied' then
  addEvent(stream, events, a.event, redis.call('HGET', KEYS[6], 'user_id') or '')
end
redis.call('LPUSH', notifications, a.entry)
redis.call('LTRIM', notifications, 0, tonumber(a.keep) - 1)
redis.call('HSET', ticket, 'status', 'applied', 'result', result, 'attempts', '1', 'updated_at', a.now)
redis.call('SPUBLISH', a.channel, a.ticket)
return {1, result}

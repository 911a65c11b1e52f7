#!lua
--[[
  release_held_purchase: an operator releases a held purchase: it is granted once, as the grant
  stage would have granted it (grant record, grantEffects, one `released` entry on the
  fulfilment stream with `source=operator`), the hold records the decision and leaves the index;
  then the hold's ticket is told (`settle_held_ticket`, in the ticket's bucket). A purchase Apple refunded while it was held is
  rejected as `refunded` instead: nothing refunded is ever granted; but a consumable refunded in
  part is granted, and the items the refund took back are taken back in the same step.

  Most keys follow from the hold (its user, original transaction),
  which only this script reads: called with others (or none), it answers {-2, hold} naming them
  and changes nothing; the caller declares their keys and calls again.

  Input:
    KEYS[1]  hold               `held:<unit>`
    KEYS[2]  holds              `held` (the index)
    KEYS[3]  claim              `txn:<unit>`
    KEYS[4]  record             `grant:<unit>`
    KEYS[5]  refunded           `refunded:<unit>`
    KEYS[6]  stream             the fulfilment stream
    KEYS[7]  owner              `owner:<original>`
    KEYS[8]  unclaimed          the bucket's `unclaimed`
    KEYS[9]  lifetime           the bucket's `lifetime:<user>`
    KEYS[10] subscription       `subscription:<original>`
    KEYS[11] rechecks           the re-check schedule
    KEYS[12] userSubscriptions  the bucket's `user-subscriptions:<user>`
    KEYS[13] purchases          the bucket's `purchases:<user>`
    KEYS[14] prorated           the bucket's `refunds-prorated:<user>`
    KEYS[15] events             the bucket's `user-events` (appendEvent)
    KEYS[16] figures            the bucket's `figures:<day>` (countFigures: the day of `now`)
    KEYS[17] subscribers        the bucket's `subscribers` (countSubscriber)
    ARGV[1] arguments           JSON: now, operator, note, ticket, user_id, original_transaction_id,
                                recheck?
  Output:
    {1, 'released' | 'rejected'}; {0, status} decided already (or `claimed_elsewhere`);
    {-1} no such hold; {-2, hold (JSON: ticket, user_id, original_transaction_id)} declare these
    keys and call again
]]
--- @include "read_hold"
--- @include "hold_entry"
--- @include "settle_hold"
--- @include "grant_effects"
--- @include "index_purchase"
--- @include "take_back_early"

local hold, holds, claim, record, refunded, stream = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local events = {index = KEYS[15], figures = KEYS[16]}
local a = cjson.decode(ARGV[1])
local h = readHold(hold)
if not h then return {-1} end
if h.status ~= 'held' then return {0, h.status} end
if h.ticket ~= a.ticket or h.user_id ~= a.user_id or h.original_transaction_id ~= a.original_transaction_id then
  return {-2, cjson.encode({ticket = h.ticket, user_id = h.user_id, original_transaction_id = h.original_transaction_id})}
end
local k = {hold = hold, holds = holds}
local taken, _, quantity = earlyShare(refunded, h.kind, h.quantity)
if redis.call('EXISTS', refunded) == 1 and not (taken and taken < quantity) then
  redis.call('DEL', claim)
  appendEvent(stream, events, holdEntry(h, {'event', 'rejected', 'source', 'operator', 'operator', a.operator},
    {'reason', 'refunded', 'rejected_at', a.now}))
  return {1, settleHold(k, h, 'rejected', 'refunded', a)}
end
if redis.call('GET', claim) ~= h.ticket or redis.call('EXISTS', record) == 1 then
  return {0, 'claimed_elsewhere'}
end
redis.call('HSET', record, 'ticket', h.ticket, 'user_id', h.user_id, 'product_id', h.product_id,
  'quantity', h.quantity, 'transaction_id', h.transaction_id, 'original_transaction_id', h.original_transaction_id,
  'environment', h.environment, 'unit', h.unit, 'granted_at', a.now, 'source', h.source, 'released_by', a.operator)
if h.app_transaction_id and h.app_transaction_id ~= '' then
  redis.call('HSET', record, 'app_transaction_id', h.app_transaction_id)
end
-- What it cost and how it was sold (`sale`, kept by the hold), on the record and the entry.
local released = {'granted_at', a.now}
local sale = {}
if h.sale and h.sale ~= '' then
  sale = cjson.decode(h.sale)
  redis.call('HSET', record, unpack(sale))
  for _, v in ipairs(sale) do released[#released + 1] = v end
end
indexPurchase(KEYS[13], h.unit, sale, a.now)
appendEvent(stream, events, holdEntry(h, {'event', 'released', 'source', 'operator', 'operator', a.operator},
  released))
-- A consumable refunded in part while held: the refunded items go back now, after its release.
takeBackEarly({refunded = refunded, record = record, stream = stream, events = events, prorated = KEYS[14]}, h.kind, h.quantity, a.now)
h.source = 'operator'
if h.kind == 'auto_renewable' then h.period = periodOf(sale, h.period_mrr) end
grantEffects(
  {owner = KEYS[7], unclaimed = KEYS[8], lifetime = KEYS[9], subscription = KEYS[10],
    rechecks = KEYS[11], userSubscriptions = KEYS[12], stream = stream, events = events, subscribers = KEYS[17]},
  h, a.now, a.recheck)
return {1, settleHold(k, h, 'granted', h.reason, a)}

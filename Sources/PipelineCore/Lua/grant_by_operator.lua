#!lua
--[[
  grant_by_operator: an operator grants something by hand (a lost order found by support, a
  compensation): once per operator id (the claim `txn:operator:<id>`), with a grant record and
  one `granted` entry on the fulfilment stream, `source=operator`, `operator`, `note`.

  Input:
    KEYS[1] claim      `txn:operator:<id>`
    KEYS[2] record     `grant:operator:<id>`
    KEYS[3] stream     the fulfilment stream
    KEYS[4] purchases  the user's `purchases:<user>` (the record's bucket's)
    KEYS[5] events     the bucket's `user-events` (appendEvent)
    ARGV[1] arguments  JSON: now, operator, note, unit, id, user_id, product_id, quantity
  Output:
    {1, 'granted'}; {0, user} when that id was granted before (to `user`)
]]
--- @include "index_purchase"
--- @include "append_event"

local claim, record, stream = KEYS[1], KEYS[2], KEYS[3]
local a = cjson.decode(ARGV[1])
if not redis.call('SET', claim, 'operator', 'NX') then
  return {0, redis.call('HGET', record, 'user_id') or ''}
end
redis.call('HSET', record, 'ticket', 'operator', 'user_id', a.user_id, 'product_id', a.product_id,
  'quantity', a.quantity, 'transaction_id', a.id, 'original_transaction_id', a.id, 'environment', 'Operator',
  'unit', a.unit, 'granted_at', a.now, 'source', 'operator', 'granted_by', a.operator, 'note', a.note)
appendEvent(stream, {index = KEYS[5]}, {'event', 'granted', 'source', 'operator', 'operator', a.operator, 'note', a.note,
  'ticket', 'operator', 'user_id', a.user_id, 'product_id', a.product_id, 'quantity', a.quantity,
  'transaction_id', a.id, 'original_transaction_id', a.id, 'environment', 'Operator', 'unit', a.unit,
  'granted_at', a.now})
indexPurchase(KEYS[4], a.unit, nil, a.now)
return {1, 'granted'}

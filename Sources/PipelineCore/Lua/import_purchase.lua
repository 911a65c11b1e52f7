#!lua
--[[
  import_purchase: `iapctl adopt import`, one purchase a studio's old system granted, taken into
  the books as a grant would take it, but with no fulfilment entry (the backend gave it already):
  a consumable's or non-consumable's unit claimed for the user (`txn:<unit>`, valued
  `import:<id>`), its grant record (`source` `import`, `adopted` 1), the purchase's owner, the
  user's index of purchases and, for a non-consumable, of lifetime units; a subscription's owner
  and the user's index of subscriptions (its periods are Apple's to tell: each one bought before
  the cutover comes `adopted`, each one after it `renewed`, to this owner). Harmless to run again.

  Input:
    KEYS[1] claim          `txn:<unit>` (a subscription: unused, its owner is its claim)
    KEYS[2] record         `grant:<unit>`
    KEYS[3] owner          `owner:<original_transaction_id>`
    KEYS[4] purchases      the user's `purchases:<user>` (the purchase's bucket's)
    KEYS[5] lifetime       the user's `lifetime:<user>` (the purchase's bucket's)
    KEYS[6] subscriptions  the user's `user-subscriptions:<user>` (the purchase's bucket's)
    ARGV[1] arguments      JSON: now, import (the import's id), user_id, unit, kind (`consumable`,
                           `non_consumable`, `auto_renewable`), transaction_id,
                           original_transaction_id, product_id, quantity, purchase_date (ms), environment
  Output:
    {1, ''} imported; {0, ''} the user's already (an earlier run, a grant); {-1, holder} another
    user's (holder: that user, or '' for a claim no grant followed yet): nothing written
]]
--- @include "index_purchase"

local claim, record, owner = KEYS[1], KEYS[2], KEYS[3]
local a = cjson.decode(ARGV[1])
local user = a.user_id

-- A subscription: its owner is what the books know of it.
if a.kind == 'auto_renewable' then
  local holder = redis.call('GET', owner)
  if holder == user then return {0, ''} end
  if holder then return {-1, holder} end
  redis.call('SET', owner, user)
  redis.call('SADD', KEYS[6], a.original_transaction_id)
  return {1, ''}
end

if redis.call('GET', claim) then
  local holder = redis.call('HGET', record, 'user_id')
  if holder == user then return {0, ''} end
  return {-1, holder or ''}
end
-- A non-consumable another user was granted under another unit (a restore) stays theirs.
local holder = redis.call('GET', owner)
if holder and holder ~= user and a.kind == 'non_consumable' then return {-1, holder} end
local ticket = 'import:' .. a.import
redis.call('SET', claim, ticket)
redis.call('HSET', record, 'ticket', ticket, 'user_id', user, 'product_id', a.product_id, 'quantity', a.quantity,
  'transaction_id', a.transaction_id, 'original_transaction_id', a.original_transaction_id,
  'environment', a.environment, 'unit', a.unit, 'granted_at', a.now, 'source', 'import', 'adopted', '1',
  'purchase_date', a.purchase_date)
redis.call('SET', owner, user, 'NX')
indexPurchase(KEYS[4], a.unit, {'purchase_date', a.purchase_date}, a.now)
if a.kind == 'non_consumable' then redis.call('SADD', KEYS[5], a.unit) end
return {1, ''}

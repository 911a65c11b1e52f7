-- A synthetic ledger with one bucket, as the pipeline writes it, for workers/migrate-bench:
-- purchases ARGV[1]+1 … ARGV[2] of ARGV[3] users. Per purchase: claim, grant record, owner and a
-- `granted` fulfilment entry; every 10th a non-consumable (lifetime set), every 20th a
-- subscription (record, user index, re-check); 1 in 200 refunded (revoked grant, refund count, a
-- `revoked` entry); three purchases a receipt, whose ticket and resubmission key (7 days) exist
-- for the newest 70 %. Runs on a single server only (its keys are in no one slot).
local first, last, users, total = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = 1764000000000
for i = first + 1, last do
  local unit = 'g' .. i
  local user = 'u' .. (i % users)
  local ticket = string.format('T%021d', math.floor(i / 3))
  local product = 'gold.100'
  if i % 10 == 0 then product = 'noads' elseif i % 20 == 1 then product = 'vip.monthly' end
  local at = tostring(now - (total - i) * 800)
  redis.call('SET', 'iap:txn:' .. unit, ticket)
  redis.call('HSET', 'iap:grant:' .. unit, 'ticket', ticket, 'user_id', user, 'product_id', product, 'quantity', '1',
    'transaction_id', unit, 'original_transaction_id', unit, 'environment', 'Production', 'unit', unit,
    'granted_at', at, 'source', 'client')
  redis.call('SET', 'iap:owner:' .. unit, user, 'NX')
  redis.call('XADD', 'iap:fulfilment', '*', 'event', 'granted', 'source', 'client', 'ticket', ticket, 'user_id', user,
    'product_id', product, 'quantity', '1', 'transaction_id', unit, 'original_transaction_id', unit,
    'environment', 'Production', 'unit', unit, 'granted_at', at)
  if product == 'noads' then redis.call('SADD', 'iap:lifetime:' .. user, unit) end
  if product == 'vip.monthly' then
    redis.call('HSET', 'iap:subscription:' .. unit, 'user_id', user, 'product_id', product, 'status', 'active',
      'expires_at', tostring(now + 86400000 * 30), 'latest_transaction_id', unit, 'event_at', at, 'cause', 'granted',
      'entitlements', 'vip', 'environment', 'Production', 'updated_at', at, 'auto_renew', '1', 'recheck_tries', '0')
    redis.call('SADD', 'iap:user-subscriptions:' .. user, unit)
    redis.call('ZADD', 'iap:rechecks', now + 86400000 * 30, unit)
  end
  if i % 200 == 7 then
    redis.call('HSET', 'iap:grant:' .. unit, 'revoked_at', at, 'revocation_reason', '0', 'revocation_type', 'REFUND')
    redis.call('INCR', 'iap:refunds:' .. user)
    redis.call('XADD', 'iap:fulfilment', '*', 'event', 'revoked', 'source', 'notification', 'ticket', ticket,
      'user_id', user, 'product_id', product, 'original_transaction_id', unit, 'unit', unit, 'revoked_at', at)
  end
  if i % 3 == 0 and i > total * 0.3 then
    redis.call('HSET', 'iap:ticket:' .. ticket, 'status', 'granted', 'attempts', '1', 'user_id', user,
      'created_at', at, 'updated_at', at, 'environment', 'Production',
      'transactions', '[{"transaction_id":"' .. unit .. '","outcome":"granted"}]')
    redis.call('EXPIRE', 'iap:ticket:' .. ticket, 604800)
    redis.call('SET', 'iap:receipt:' .. string.format('%064d', i), ticket, 'EX', 604800)
  end
end
return last - first

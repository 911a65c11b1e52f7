--[[
  sharePurchase(k, a, purchase, now): IAP_SHARING_POLICY (`a.sharing`), when user `a.user_id`
  proves a purchase whose grant (`k.record`) another user holds. Returns the purchase's outcome
  and reason:
  - `bind` (or none): `duplicate`, `owned_by_another_account`;
  - `transfer`: the grant, its claim, its owner and its entitlements move to the user (the
    holder's `revoked` with reason `transferred`, the new owner's `granted`): `granted`;
  - `share`: the user gets its entitlements too: `duplicate`, `shared`.
  A consumable (no kind) is a plain duplicate without a read.

  k: claim, record, subscription, owner, stream, events (the users' index), lifetime, userSubscriptions and purchases (the user's),
     holderLifetime and holderSubscriptions (the holder's; only `transfer` touches them).
]]
--- @include "announce_entitlements"

local function sharePurchase(k, a, purchase, now)
  if not purchase.kind or not a.sharing then return 'duplicate', '' end
  local holder = redis.call('HGET', k.record, 'user_id')
  local user, unit, otx = a.user_id, purchase.unit, purchase.original_transaction_id
  if not holder or holder == user then return 'duplicate', '' end
  local on, status, expires = true, 'active', ''
  if purchase.kind == 'auto_renewable' then
    local sub = redis.call('HMGET', k.subscription, 'status', 'expires_at')
    status, expires = sub[1] or 'active', sub[2] or ''
    on = status == 'active' or status == 'grace_period'
  end
  if a.sharing == 'transfer' then
    local g = redis.call('HMGET', k.record, 'ticket', 'product_id', 'quantity', 'transaction_id', 'environment', 'granted_at')
    redis.call('HSET', k.record, 'user_id', user, 'ticket', a.ticket, 'transferred_from', holder, 'transferred_at', now)
    redis.call('SET', k.claim, a.ticket)
    appendEvent(k.stream, k.events, {'event', 'revoked', 'source', a.source, 'ticket', g[1], 'user_id', holder,
      'product_id', g[2], 'quantity', g[3], 'transaction_id', g[4], 'original_transaction_id', otx,
      'environment', g[5], 'unit', unit, 'granted_at', g[6], 'revoked_at', now, 'revocation_reason', 'transferred'})
    appendEvent(k.stream, k.events, {'event', 'granted', 'source', a.source, 'ticket', a.ticket, 'user_id', user,
      'product_id', g[2], 'quantity', g[3], 'transaction_id', g[4], 'original_transaction_id', otx,
      'environment', g[5], 'unit', unit, 'granted_at', now, 'transferred_from', holder})
    redis.call('SET', k.owner, user)
    -- The user's record lists it now; the holder's still names it, its grant record saying where it went.
    redis.call('ZADD', k.purchases, now, unit)
    if purchase.kind == 'non_consumable' then
      redis.call('SREM', k.holderLifetime, unit)
      redis.call('SADD', k.lifetime, unit)
    else
      redis.call('HSET', k.subscription, 'user_id', user)
      redis.call('SREM', k.holderSubscriptions, otx)
      redis.call('SADD', k.userSubscriptions, otx)
    end
    if on then
      announceEntitlements(k.stream, k.events, holder, purchase.entitlements, 'ended', purchase.product_id, otx, expires, now, a.source)
      announceEntitlements(k.stream, k.events, user, purchase.entitlements, status, purchase.product_id, otx, expires, now, a.source)
    end
    return 'granted', ''
  elseif a.sharing == 'share' then
    local added
    if purchase.kind == 'non_consumable' then
      added = redis.call('SADD', k.lifetime, unit)
    else
      added = redis.call('SADD', k.userSubscriptions, otx)
    end
    if added == 1 and on then
      announceEntitlements(k.stream, k.events, user, purchase.entitlements, status, purchase.product_id, otx, expires, now, a.source)
    end
    return 'duplicate', 'shared'
  end
  return 'duplicate', 'owned_by_another_account'
end

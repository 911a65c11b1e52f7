--[[
  grantEffects(k, g, now, policy): what a new grant does beyond its record and its fulfilment
  entry (`grant_purchases`, `release_held_purchase`):
  - binds the original transaction to the user when nobody holds it (the app account token, whose
    key is in no bucket, is bound by the caller after the step: `PipelineStore.bindAccountTokens`);
  - forgets the purchase as unclaimed;
  - a non-consumable: adds the unit to the user's lifetime purchases;
  - a subscription period: applySubscription with the period's status (`active` until
    `expires_at`, else `expired`).

  k: owner (`owner:<original>`), unclaimed, lifetime (the user's), subscription, rechecks, userSubscriptions (the user's), stream,
     events (the users' index), subscribers (the bucket's: a subscription's).
  g: user_id, unit, transaction_id, original_transaction_id, product_id, environment, source, and
     optionally kind, entitlements (comma-separated), expires_at, signed_at, app_transaction_id, bundle_id
     (the app: on the subscription's record and its events), period (a subscription's: periodOf).
]]
--- @include "apply_subscription"

local function grantEffects(k, g, now, policy)
  redis.call('SET', k.owner, g.user_id, 'NX')
  redis.call('HDEL', k.unclaimed, g.transaction_id)
  if g.kind == 'non_consumable' then
    redis.call('SADD', k.lifetime, g.unit)
  elseif g.kind == 'auto_renewable' then
    local expires = g.expires_at or ''
    local status = 'active'
    if expires ~= '' and tonumber(expires) <= tonumber(now) then status = 'expired' end
    local signed = g.signed_at or ''
    if signed == '' then signed = now end
    applySubscription(
      {subscription = k.subscription, rechecks = k.rechecks, userSubscriptions = k.userSubscriptions, stream = k.stream,
        events = k.events, subscribers = k.subscribers},
      {original_transaction_id = g.original_transaction_id, user_id = g.user_id, product_id = g.product_id,
        status = status, expires_at = expires, signed_at = signed, cause = 'grant', source = g.source,
        transaction_id = g.transaction_id, entitlements = g.entitlements, environment = g.environment,
        app_transaction_id = g.app_transaction_id, bundle_id = g.bundle_id, period = g.period},
      now, policy)
  end
end

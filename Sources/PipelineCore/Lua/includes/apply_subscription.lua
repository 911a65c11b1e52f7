--[[
  applySubscription(k, s, now, policy): news about one auto-renewable subscription applied to its
  record in signed-time order. Returns what it did: `applied`, `stale` (older news than what
  made the record), `older_period` (a grant of a period that ends before the record's),
  `not_latest` (with `require_latest`, a refund: news about another transaction than the
  record's latest), `unknown_subscription` (no record and no user, or no record and no status).

  k: the keys it touches:
    k.subscription       the record, `subscription:<original_transaction_id>`
    k.rechecks           the re-check schedule (zset)
    k.userSubscriptions  the set of `s.user_id`'s subscriptions (nil when `s` names no user):
                         written only when this news creates the record
    k.stream             the fulfilment stream
    k.events             the bucket's index of each user's events (appendEvent)
    k.subscribers        the bucket's live count of subscribers (countSubscriber)
  s: original_transaction_id, user_id?, product_id?, status?, expires_at?, grace_expires_at?,
     signed_at, cause, source?, transaction_id?, entitlements?, environment?, auto_renew?,
     app_transaction_id? (the Apple Account, when Apple said), require_latest?, expiration_reason?
     (on the `expired` entry), eligible_win_back_offer_ids? (comma-separated, Apple's: on the record
     and the `expired` entry), history_revision? (a re-check's: where it read Apple's history to,
     kept on an existing record whatever the news' fate: its periods were granted before),
     bundle_id? (the app: on the record, its `entitlement_changed` and `expired` entries),
     period? (a grant's: the period's fields, periodOf, kept when it is the record's latest period,
     and what the subscription counts in follows: countSubscriber; keepPeriod), renewal_plan? (the
     renewal info's billing plan, name, value…: keepRenewalPlan). Absent
     status, expires_at, product_id, entitlements, app_transaction_id, bundle_id keep the record's.
  policy: the re-check schedule (see scheduleRecheck), or nil.

  The record keeps its first user (the owner). When the status or the product changes while the
  subscription is or was on (`active`, `grace_period`), one `entitlement_changed` entry per
  entitlement goes to the stream (a change of product ends the old product's, status `ended`),
  and one `expired` entry when a known subscription expires.
]]
--- @include "split_list"
--- @include "schedule_recheck"
--- @include "append_event"
--- @include "count_subscriber"

-- The renewal info's billing plan on the record (`renewal_plan`: name, value, …), and the
-- commitment's renewal fields it lacks taken off (the subscription is in no commitment now).
local function keepRenewalPlan(record, plan)
  keepFields(record, plan, {'commitment_renews', 'commitment_renewal_product_id', 'commitment_renewal_billing_plan_type',
    'commitment_renewal_at', 'commitment_renewal_price'})
end

local function applySubscription(k, s, now, policy)
  local old = redis.call('HMGET', k.subscription, 'event_at', 'status', 'product_id', 'entitlements', 'user_id',
    'expires_at', 'latest_transaction_id')
  if not old[5] and not s.user_id then return 'unknown_subscription' end
  if s.history_revision and old[5] then redis.call('HSET', k.subscription, 'history_revision', s.history_revision) end
  if old[1] and tonumber(old[1]) > tonumber(s.signed_at) then
    -- Older news leaves the status alone, but a later period's grant still extends what the
    -- record knows of its periods (its end and latest transaction): a DID_RENEW that comes
    -- after the EXPIRED of the period it started.
    if s.cause == 'grant' and old[6] and old[6] ~= '' and s.expires_at and s.expires_at ~= ''
      and tonumber(s.expires_at) > tonumber(old[6]) then
      redis.call('HSET', k.subscription, 'expires_at', s.expires_at, 'latest_transaction_id', s.transaction_id,
        'updated_at', now)
      if s.period then
        keepPeriod(k.subscription, s.period)
        countSubscriber(k.subscribers, k.subscription)
      end
    end
    return 'stale'
  end
  if s.cause == 'grant' and old[6] and old[6] ~= '' and s.expires_at ~= '' and tonumber(old[6]) > tonumber(s.expires_at)
    and old[2] ~= 'revoked' then
    return 'older_period'
  end
  if s.require_latest and old[7] and old[7] ~= s.transaction_id then return 'not_latest' end
  if not s.status then
    if not old[2] then return 'unknown_subscription' end
    s.status = old[2]
  end
  local user = old[5] or s.user_id
  local expires = s.expires_at
  if not expires or expires == '' then expires = old[6] or '' end
  local product = s.product_id or old[3]
  local entitlements = s.entitlements
  if not entitlements or (product == old[3] and entitlements == '') then entitlements = old[4] or '' end
  s.expires_at, s.product_id, s.entitlements = expires, product, entitlements
  redis.call('HSET', k.subscription, 'user_id', user, 'product_id', product, 'status', s.status, 'expires_at', expires,
    'event_at', s.signed_at, 'cause', s.cause, 'latest_transaction_id', s.transaction_id or old[7] or '',
    'entitlements', entitlements, 'environment', s.environment or '', 'updated_at', now)
  if s.period then keepPeriod(k.subscription, s.period) end
  if s.grace_expires_at and s.grace_expires_at ~= '' then
    redis.call('HSET', k.subscription, 'grace_expires_at', s.grace_expires_at)
  else
    redis.call('HDEL', k.subscription, 'grace_expires_at')
  end
  if s.auto_renew then redis.call('HSET', k.subscription, 'auto_renew', s.auto_renew) end
  if s.app_transaction_id and s.app_transaction_id ~= '' then
    redis.call('HSET', k.subscription, 'app_transaction_id', s.app_transaction_id)
  end
  -- The app it is bought in, when known: on the record, and on its events below.
  local app = s.bundle_id
  if app and app ~= '' then
    redis.call('HSET', k.subscription, 'bundle_id', app)
  else
    app = redis.call('HGET', k.subscription, 'bundle_id')
  end
  -- How it renews: the renewal info's billing plan and, within a commitment, what that renews into.
  if s.renewal_plan then keepRenewalPlan(k.subscription, s.renewal_plan) end
  -- Apple's win-back offers the subscriber may have now (StoreKit applies them unsigned).
  if s.eligible_win_back_offer_ids then
    redis.call('HSET', k.subscription, 'eligible_win_back_offer_ids', s.eligible_win_back_offer_ids)
  end
  scheduleRecheck(k.rechecks, k.subscription, s.original_transaction_id, s.status, expires, now, old[6] ~= expires,
    s.cause, policy)
  -- A new record joins its owner's subscriptions; an existing one is there already.
  if not old[5] then redis.call('SADD', k.userSubscriptions, s.original_transaction_id) end
  countStatusChange(k.events.figures, {event = 'status', environment = s.environment or '', product_id = product}, old[2], s.status)
  local source = s.source or s.cause
  local function changed(entitlement, status, changedProduct)
    local fields = {'event', 'entitlement_changed', 'source', source, 'user_id', user,
      'entitlement', entitlement, 'status', status, 'product_id', changedProduct,
      'original_transaction_id', s.original_transaction_id, 'expires_at', s.expires_at, 'changed_at', now}
    if app then
      fields[#fields + 1] = 'bundle_id'
      fields[#fields + 1] = app
    end
    appendEvent(k.stream, k.events, fields)
  end
  local wasOn = old[2] == 'active' or old[2] == 'grace_period'
  local isOn = s.status == 'active' or s.status == 'grace_period'
  if old[3] and old[3] ~= s.product_id and wasOn then
    local kept = {}
    if isOn then
      for _, e in ipairs(splitList(s.entitlements)) do kept[e] = true end
    end
    for _, e in ipairs(splitList(old[4])) do
      if not kept[e] then changed(e, 'ended', old[3]) end
    end
  end
  if (wasOn or isOn) and (old[2] ~= s.status or old[3] ~= s.product_id) then
    for _, e in ipairs(splitList(s.entitlements)) do changed(e, s.status, s.product_id) end
  end
  if s.status == 'expired' and old[2] and old[2] ~= 'expired' then
    local fields = {'event', 'expired', 'source', source, 'user_id', user, 'product_id', s.product_id,
      'original_transaction_id', s.original_transaction_id, 'expires_at', s.expires_at, 'changed_at', now}
    -- Why, when Apple said (an EXPIRED notification's subtype, the renewal info's expirationIntent).
    if s.expiration_reason then
      fields[#fields + 1] = 'expiration_reason'
      fields[#fields + 1] = s.expiration_reason
    end
    local kept = redis.call('HMGET', k.subscription, 'eligible_win_back_offer_ids', 'environment')
    local winBack = kept[1]
    -- Its environment, when the record knows it (what the day's figures count it by).
    if kept[2] and kept[2] ~= '' then
      fields[#fields + 1] = 'environment'
      fields[#fields + 1] = kept[2]
    end
    if winBack and winBack ~= '' then
      fields[#fields + 1] = 'eligible_win_back_offer_ids'
      fields[#fields + 1] = winBack
    end
    if app then
      fields[#fields + 1] = 'bundle_id'
      fields[#fields + 1] = app
    end
    appendEvent(k.stream, k.events, fields)
  end
  countSubscriber(k.subscribers, k.subscription)
  return 'applied'
end

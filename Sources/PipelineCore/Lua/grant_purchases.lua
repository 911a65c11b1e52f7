#!lua
--[[
  grant_purchases: grant stage, one step per job (or per job of a batch: below). For each purchase this ticket owns the claim
  of, writes the grant record if it does not exist and adds it to the fulfilment stream only then
  (event `granted`, or `renewed` for a subscription's later period); binds the purchase's
  original transaction id to the user when nobody holds it; forgets it
  as unclaimed; sets the ticket's final status and transactions; publishes; acks. Running it
  twice grants nothing twice. One part of a receipt whose purchases lie in several buckets sets
  its own ticket (the part's) and stays in flight: `finish_part` and `acknowledge_job` follow.

  The steps, each a function below, in the order a purchase meets them:
  - claimOwner: the claim (`txn:<unit>`) is taken for this ticket unless another ticket has it;
  - another ticket's claim: sharePurchase (IAP_SHARING_POLICY: `bind`, `transfer`, `share`);
  - existingGrant: a grant record exists (a redelivered job, or another ticket granted it);
  - earlierHold: an earlier run of this job held it (still held, or rejected by an operator);
  - refundedBeforeGrant: Apple refunded it before its grant (`refunded:<unit>`): rejected
    `refunded`, its claim released; but a consumable refunded in part (`<ms>:<percentage>`) is
    granted, and the items the refund took back are taken back in the same step (takeBackEarly);
  - countedRules: the purchase policy's counted rules, in the step that would grant: a user with
    `refund_limit` refunds, or a purchase that found no place under its product's `daily_limit`
    in the user's rolling 24 hours (`daily_reserved`, by `reserve_daily_grant` before), or one
    bought on an Apple Account the user came to after the limit was full (`account_shared`, by
    `seat_apple_account` before), is held;
  - holdPurchase: a hold record (`held:<unit>`, indexed in `held` and the user's `purchases`),
    one `held` entry, the ticket `held`; the claim stays with the ticket; `release_held_purchase`
    grants it later;
  - grantPurchase: the record, the stream entry and grantEffects. A subscription's later period
    is granted to the subscription's owner (`owner:<original>`) whoever sends it: another
    account's ticket gets `duplicate`, `owned_by_another_account`. A pre-adoption purchase
    (`adopt`: made before its app's cutover, the studio's old system granted it) is recorded and
    owned the same, the record marked `adopted`, but its entry is `adopted`, never `granted` or
    `renewed`, and its outcome `adopted`; the counted rules do not apply to it;
  - queueErrand: a purchase without an app account token granted to a user who has one
    (`token_job`): its errand to Apple (Set App Account Token) queued on the bucket's notify
    queue with its ticket (`token-<original>`, source `app_account_token`), unless that ticket
    exists (queued or done within its time to live); a consumable granted (`finish_job`): its
    errand to Apple (Finish Transaction), the same way (`finish-<transaction>`, source
    `finish_transaction`).
  Then the job's legacy receipt is kept on the subscriptions this user owns (for re-checks by
  verifyReceipt), and a re-check's answer (`subscription`) is applied after any new period's grant.

  Input:
    KEYS[1] inflight            the worker's in-flight list
    KEYS[2] ticket              the job's ticket hash (a part's own, `ticket:<part id>`)
    KEYS[3] stream              the fulfilment stream
    KEYS[4] unclaimed           the bucket's `unclaimed`
    KEYS[5] holds               the bucket's `held` (the index of holds)
    KEYS[6] lifetime            the bucket's `lifetime:<user>`
    KEYS[7] userSubscriptions   the bucket's `user-subscriptions:<user>`
    KEYS[8] purchases           the bucket's `purchases:<user>`
    KEYS[9] prorated            the bucket's `refunds-prorated:<user>`
    KEYS[10] events             the bucket's `user-events` (each user's events: appendEvent)
    KEYS[11] figures            the bucket's `figures:<day>` (countFigures: the day of `now`)
    KEYS[12…] the keys named by index in ARGV: each purchase's `k` (claim, record, hold, refunded,
              owner, subscription, rechecks, subscribers (a subscription's period: the bucket's
              `subscribers`), token_ticket, finish_ticket: as it has them), each other user's in
              `others` (lifetime, subscriptions, purchases), the re-check answer's record, schedule
              and subscribers (`subscription_key`, `rechecks_key`, `subscribers_key`), the bucket's
              notify queue (`notify_queue`)
    ARGV[1] taken               the job as taken
    ARGV[2] arguments           JSON (`GrantPurchasesArguments`): ticket (the client's), part? (a
                                part's id: nothing is published), keep? (the job stays in
                                flight: a part, or a job with daily places), now,
                                channel, user_id,
                                environment, source, refund_limit? and refunds (the user's
                                refunds in every bucket, read before), sharing?, purchases (each:
                                transaction_id, original_transaction_id, product_id, quantity,
                                unit?, outcome, reason?, app_account_token?, app_transaction_id?,
                                account_shared? (`1`: one user too many on its Apple Account), currency?,
                                daily_limit?, daily_reserved?, kind?, entitlements?, expires_at?, signed_at?,
                                adopt? (`1`: pre-adoption, recorded as `adopted`),
                                period_mrr? (a subscription's period: its price as a month's,
                                `MonthlyPrice`; with its sale's currency and storefront on the
                                subscription's record when it is the latest period),
                                sale? (name, value…: price, currency, storefront, offer_*,
                                in_app_ownership_type, purchase_date, where Apple said; on the
                                record, the `granted`/`renewed` entry, and a hold for its release),
                                token_job? (the errand's job, with `k.token_ticket`),
                                finish_job? (the errand's job, with `k.finish_ticket`), k),
                                recheck? (the re-check schedule), subscription? and
                                subscription_key?, rechecks_key?, subscribers_key? (a re-check's answer), receipt?, others?
                                (user id → {lifetime, subscriptions, purchases}: KEYS indexes), notify_queue? and
                                ticket_ttl (s) with any token_job or finish_job
  Batch form: several of a worker's jobs in one call, each as if called alone (`includes/each_job`):
    ARGV[1] `batch <keys> <arguments> …`, each job's sizes; KEYS each job's keys as above, in turn;
    ARGV[2…] each job's arguments as above, in turn. Output: the list of the jobs' answers.
  Output:
    {1, status, transactions (JSON), reason, kept} status granted, duplicate, held or rejected
    (reason '' unless rejected; a purchase `adopted` counts as a duplicate: granted before), as set on the ticket; kept: the units with a daily place that
    stand granted to this user (one per line), the others give their place back; {0} the worker
    no longer holds the job;
    {-1} its ticket is gone; {-2, users (JSON array)} declare these users' keys in `others`
    and call again (nothing was written)
]]
--- @include "each_job"
--- @include "new_ticket"
--- @include "ticket_status"
--- @include "grant_effects"
--- @include "share_purchase"
--- @include "index_purchase"
--- @include "take_back_early"

-- One job: everything below, as if the script were called for it alone.
local function grantJob(KEYS, ARGV)
  local inflight, ticketKey, stream = KEYS[1], KEYS[2], KEYS[3]
  local events = {index = KEYS[10], figures = KEYS[11]}
  local a = cjson.decode(ARGV[2])
  local ticket, now, user, environment = a.ticket, a.now, a.user_id, a.environment
  local others = a.others or {}

  -- A purchase's keys, by name, from its `k` (indexes into KEYS).
  local function keysOf(purchase)
    local k = {}
    for name, index in pairs(purchase.k or {}) do k[name] = KEYS[index] end
    return k
  end

  local function isClaimed(purchase)
    return (purchase.outcome == 'pending' or purchase.outcome == 'held') and purchase.k and purchase.k.claim
  end

  -- The users besides this one whose keys a step will touch and the caller has not declared: the
  -- holder a transfer takes a purchase from, the owner a renewal is granted to. Reads only.
  local function undeclaredUsers()
    local missing, seen = {}, {}
    local function need(other)
      if other and other ~= user and not others[other] and not seen[other] then
        seen[other] = true
        missing[#missing + 1] = other
      end
    end
    for _, purchase in ipairs(a.purchases) do
      if isClaimed(purchase) then
        local k = keysOf(purchase)
        if a.sharing == 'transfer' and purchase.kind then
          local claimedBy = redis.call('GET', k.claim)
          if claimedBy and claimedBy ~= ticket then need(redis.call('HGET', k.record, 'user_id')) end
        end
        if purchase.kind == 'auto_renewable' and purchase.transaction_id ~= purchase.original_transaction_id then
          need(redis.call('GET', k.owner))
        end
      end
    end
    return missing
  end

  -- The keys of one user: this one's, or another's as declared in `others`.
  local function userKeys(id)
    if id == user then return {lifetime = KEYS[6], subscriptions = KEYS[7], purchases = KEYS[8]} end
    local o = others[id] or {}
    return {lifetime = KEYS[o.lifetime], subscriptions = KEYS[o.subscriptions], purchases = KEYS[o.purchases]}
  end

  -- The ticket that holds the purchase's claim, taking it for this ticket when nobody has.
  local function claimOwner(k)
    local owner = redis.call('GET', k.claim)
    if owner then return owner end
    redis.call('SET', k.claim, ticket)
    return ticket
  end

  -- A grant record exists: this job's own earlier run, or another ticket's grant.
  local function existingGrant(k)
    local r = redis.call('HMGET', k.record, 'ticket', 'user_id', 'adopted')
    if r[1] ~= ticket then return 'duplicate', '' end
    if r[2] == user then return (r[3] == '1' and 'adopted') or 'granted', '' end
    return 'duplicate', 'owned_by_another_account'
  end

  -- Held by an earlier run of this job: as it stands (still held, or rejected by an operator).
  -- Only a purchase a rule could hold has a hold to look for: no extra read on the common path.
  local function earlierHold(k, purchase, why)
    local couldBeHeld = purchase.outcome == 'held' or a.refund_limit or purchase.daily_limit or purchase.account_shared
    if not couldBeHeld or redis.call('HGET', k.hold, 'ticket') ~= ticket then return nil end
    local h = redis.call('HMGET', k.hold, 'status', 'reason')
    if h[1] == 'rejected' then return 'rejected', h[2] or why end
    return 'held', h[2] or why
  end

  -- Apple refunded it before we granted it: nothing to grant; a reversal can still let it through.
  -- A consumable refunded in part keeps what the refund left (grantPurchase, then takeBackEarly).
  -- The third answer: whether a refund is remembered at all (without one, the grant has nothing
  -- to take back early, and takeBackEarly's read is saved).
  local function refundedBeforeGrant(k, purchase)
    if redis.call('EXISTS', k.refunded) == 0 then return nil, nil, false end
    local taken, _, quantity = earlyShare(k.refunded, purchase.kind, purchase.quantity)
    if taken and taken < quantity then return nil, nil, true end
    redis.call('DEL', k.claim)
    return 'rejected', 'refunded', true
  end


  -- The purchase policy's counted rules: the reason to hold a pending purchase, or nil. A
  -- daily-capped purchase had its place in the user's window reserved before this step
  -- (`reserve_daily_grant`), or found the cap reached.
  local function countedRules(purchase, refunds)
    if a.refund_limit and refunds >= tonumber(a.refund_limit) then return 'refund_limit_exceeded' end
    if purchase.daily_limit and purchase.daily_reserved ~= '1' then return 'daily_limit_exceeded' end
    if purchase.account_shared == '1' then return 'apple_account_shared' end
    return nil
  end

  local function holdPurchase(k, purchase, why)
    local tx, otx, product, quantity, unit =
      purchase.transaction_id, purchase.original_transaction_id, purchase.product_id, purchase.quantity, purchase.unit
    redis.call('HSET', k.hold, 'status', 'held', 'reason', why, 'ticket', ticket, 'user_id', user,
      'product_id', product, 'quantity', quantity, 'transaction_id', tx, 'original_transaction_id', otx,
      'environment', environment, 'unit', unit, 'held_at', now, 'source', a.source,
      'currency', purchase.currency or '', 'app_account_token', purchase.app_account_token or '',
      'app_transaction_id', purchase.app_transaction_id or '', 'kind', purchase.kind or '', 'entitlements', purchase.entitlements or '',
      'expires_at', purchase.expires_at or '', 'signed_at', purchase.signed_at or '',
      'sale', purchase.sale and cjson.encode(purchase.sale) or '', 'period_mrr', purchase.period_mrr or '')
    redis.call('ZADD', KEYS[5], now, unit)
    appendEvent(stream, events, {'event', 'held', 'source', a.source, 'ticket', ticket,
      'user_id', user, 'product_id', product, 'quantity', quantity, 'transaction_id', tx,
      'original_transaction_id', otx, 'environment', environment, 'unit', unit, 'held_at', now, 'reason', why})
    -- The user's record lists it while held, and after its release or rejection.
    indexPurchase(KEYS[8], unit, purchase.sale, now)
  end

  -- An errand to Apple for the notify stage: the one that sets the user's app account token on a
  -- purchase granted without one (one per original transaction while its ticket lives), or the one
  -- that finishes a granted consumable (one per transaction).
  local function queueErrand(ticketKey, job, source, idName, id)
    if redis.call('EXISTS', ticketKey) == 1 then return end
    newTicket(ticketKey, user, now, tonumber(a.ticket_ttl), {'source', source, idName, id, 'environment', environment})
    redis.call('LPUSH', KEYS[a.notify_queue], job)
  end

  -- Writes the grant record and its stream entry, then grantEffects; returns the outcome for this
  -- ticket (`granted`, or a duplicate when the subscription's owner is another account).
  local function grantPurchase(k, purchase)
    local tx, otx, product, quantity, unit =
      purchase.transaction_id, purchase.original_transaction_id, purchase.product_id, purchase.quantity, purchase.unit
    local renewal = purchase.kind == 'auto_renewable' and tx ~= otx
    -- A subscription's later period belongs to the subscription's owner, whoever sends it.
    local grantee = user
    if renewal then grantee = redis.call('GET', k.owner) or user end
    local adopted = purchase.adopt == '1'
    local event = (adopted and 'adopted') or (renewal and 'renewed') or 'granted'
    -- The record's fields, written in one HSET below.
    local record = {'ticket', ticket, 'user_id', grantee, 'product_id', product,
      'quantity', quantity, 'transaction_id', tx, 'original_transaction_id', otx,
      'environment', environment, 'unit', unit, 'granted_at', now, 'source', a.source}
    if adopted then
      record[#record + 1] = 'adopted'
      record[#record + 1] = '1'
    end
    local fields = {'event', event, 'source', a.source, 'ticket', ticket,
      'user_id', grantee, 'product_id', product, 'quantity', quantity, 'transaction_id', tx,
      'original_transaction_id', otx, 'environment', environment, 'unit', unit, 'granted_at', now}
    if purchase.expires_at then
      fields[#fields + 1] = 'expires_at'
      fields[#fields + 1] = purchase.expires_at
    end
    -- The Apple Account that bought it, when Apple said (on the record and the entry).
    if purchase.app_transaction_id then
      for _, list in ipairs({record, fields}) do
        list[#list + 1] = 'app_transaction_id'
        list[#list + 1] = purchase.app_transaction_id
      end
    end
    -- What it cost and how it was sold, where Apple said (on the record and the entry).
    for _, v in ipairs(purchase.sale or {}) do
      record[#record + 1] = v
      fields[#fields + 1] = v
    end
    redis.call('HSET', k.record, unpack(record))
    -- A subscription's period: a renewal after a free trial's period is its conversion to paid
    -- (`converted_from_trial`); the subscription's record keeps the offer of its latest period.
    local period
    if purchase.kind == 'auto_renewable' then
      period = periodOf(purchase.sale, purchase.period_mrr)
      local offer = saleField(purchase.sale, 'offer_discount_type')
      if renewal and not adopted and offer ~= 'FREE_TRIAL' and redis.call('HGET', k.subscription, 'period_offer') == 'FREE_TRIAL' then
        fields[#fields + 1] = 'converted_from_trial'
        fields[#fields + 1] = '1'
      end
      -- The first period bought after an answer to Apple's retention request: the subscriber
      -- stayed, saved by the answer's rule (countFigures: `retention_saved:<rule>`), once per answer.
      if renewal and not adopted then
        local kept = redis.call('HMGET', k.subscription, 'retention_rule', 'retention_offered_at', 'retention_saved_for')
        local bought = tonumber(saleField(purchase.sale, 'purchase_date')) or tonumber(now)
        if kept[1] and kept[2] and kept[2] ~= kept[3] and bought >= tonumber(kept[2]) then
          fields[#fields + 1] = 'retention_rule'
          fields[#fields + 1] = kept[1]
          redis.call('HSET', k.subscription, 'retention_saved_for', kept[2])
        end
      end
    end
    appendEvent(stream, events, fields)
    local theirs = userKeys(grantee)
    indexPurchase(theirs.purchases, unit, purchase.sale, now)
    grantEffects(
      {owner = k.owner, unclaimed = KEYS[4], lifetime = theirs.lifetime, subscription = k.subscription,
        rechecks = k.rechecks, userSubscriptions = theirs.subscriptions, stream = stream,
        events = events, subscribers = k.subscribers},
      {user_id = grantee, unit = unit, transaction_id = tx, original_transaction_id = otx, product_id = product,
        environment = environment, source = a.source, kind = purchase.kind,
        entitlements = purchase.entitlements, expires_at = purchase.expires_at, signed_at = purchase.signed_at,
        app_transaction_id = purchase.app_transaction_id, bundle_id = a.bundle_id, period = period},
      now, a.recheck)
    if grantee ~= user then return 'duplicate', 'owned_by_another_account' end
    if purchase.token_job then
      queueErrand(k.token_ticket, purchase.token_job, 'app_account_token', 'original_transaction_id', otx)
    end
    if purchase.finish_job then queueErrand(k.finish_ticket, purchase.finish_job, 'finish_transaction', 'transaction_id', tx) end
    return adopted and 'adopted' or 'granted', ''
  end

  -- One claimed purchase's outcome and reason, through the steps above.
  local function decide(purchase, refunds)
    local k = keysOf(purchase)
    local why = purchase.reason or ''
    local owner = claimOwner(k)
    if owner ~= ticket then
      -- Only a transfer touches the holder's keys: a consumable's duplicate costs no read.
      local theirs = {}
      if a.sharing == 'transfer' and purchase.kind then
        local holder = redis.call('HGET', k.record, 'user_id')
        if holder then theirs = userKeys(holder) end
      end
      return sharePurchase(
        {claim = k.claim, record = k.record, subscription = k.subscription, owner = k.owner, stream = stream, events = events,
          lifetime = KEYS[6], userSubscriptions = KEYS[7], purchases = KEYS[8], holderLifetime = theirs.lifetime,
          holderSubscriptions = theirs.subscriptions},
        a, purchase, now)
    end
    if redis.call('EXISTS', k.record) == 1 then return existingGrant(k) end
    local outcome, reason = earlierHold(k, purchase, why)
    if outcome then return outcome, reason end
    local refunded
    outcome, reason, refunded = refundedBeforeGrant(k, purchase)
    if outcome then return outcome, reason end
    outcome = purchase.outcome
    if outcome == 'pending' and purchase.adopt ~= '1' then
      local rule = countedRules(purchase, refunds)
      if rule then outcome, why = 'held', rule end
    end
    if outcome == 'held' then
      holdPurchase(k, purchase, why)
      return 'held', why
    end
    outcome, reason = grantPurchase(k, purchase)
    if refunded and (outcome == 'granted' or outcome == 'adopted') then
      takeBackEarly({refunded = k.refunded, record = k.record, stream = stream, events = events, prorated = KEYS[9]}, purchase.kind,
        purchase.quantity, now)
    end
    return outcome, reason
  end

  -- A legacy receipt of subscriptions this user owns: kept for re-checks by verifyReceipt.
  local function keepReceipt()
    for _, purchase in ipairs(a.purchases) do
      local k = keysOf(purchase)
      if purchase.kind == 'auto_renewable' and k.subscription and redis.call('HGET', k.subscription, 'user_id') == user then
        redis.call('HSET', k.subscription, 'receipt', a.receipt)
      end
    end
  end

  -- The ack comes after the look for undeclared keys: a step that must be called again has
  -- written nothing, and the job stays in flight for that call.
  if redis.call('EXISTS', ticketKey) == 0 then return {-1} end
  local missing = undeclaredUsers()
  if #missing > 0 then return {-2, cjson.encode(missing)} end
  -- A job kept in flight (a part, whose outcome goes on to the client's ticket; a job with daily
  -- places to give back) is acked by `acknowledge_job` after the steps that follow: here the step
  -- only makes sure the worker still holds it.
  if a.keep then
    if not redis.call('LPOS', inflight, ARGV[1]) then return {0} end
  elseif redis.call('LREM', inflight, 1, ARGV[1]) == 0 then
    return {0}
  end

  local refunds = 0
  if a.refund_limit then refunds = tonumber(a.refunds or '0') end
  local granted, duplicates, held, reason = 0, 0, 0, nil
  local results = {}
  for _, purchase in ipairs(a.purchases) do
    local outcome, why = purchase.outcome, purchase.reason or ''
    if isClaimed(purchase) then outcome, why = decide(purchase, refunds) end
    if outcome == 'granted' then granted = granted + 1
    elseif outcome == 'duplicate' or outcome == 'adopted' then duplicates = duplicates + 1
    elseif outcome == 'held' then held = held + 1
    elseif not reason and why ~= '' then reason = why end
    local entry = {transaction_id = purchase.transaction_id, original_transaction_id = purchase.original_transaction_id,
      product_id = purchase.product_id, quantity = tonumber(purchase.quantity), outcome = outcome}
    if why ~= '' and outcome ~= 'granted' then entry.reason = why end
    results[#results + 1] = cjson.encode(entry)
  end
  if a.receipt then keepReceipt() end
  -- A re-check's answer: the subscription as Apple says it is now, after any new period's grant.
  if a.subscription then
    local applied = applySubscription(
      {subscription = KEYS[a.subscription_key], rechecks = KEYS[a.rechecks_key], userSubscriptions = KEYS[7], stream = stream,
        events = events, subscribers = KEYS[a.subscribers_key]},
      a.subscription, now, a.recheck)
    redis.call('HSET', ticketKey, 'subscription', applied)
  end
  local status = ticketStatus(granted, duplicates, held)
  local transactions = '[' .. table.concat(results, ',') .. ']'
  redis.call('HSET', ticketKey, 'status', status, 'transactions', transactions, 'environment', environment, 'updated_at', now)
  if status == 'rejected' then
    reason = reason or 'no_purchases'
    redis.call('HSET', ticketKey, 'reason', reason)
  else
    reason = ''
    redis.call('HDEL', ticketKey, 'reason')
  end
  if not a.part then redis.call('SPUBLISH', a.channel, ticket) end
  -- The capped units that stand granted to this user: they keep their place in the user's window.
  local kept = {}
  for _, purchase in ipairs(a.purchases) do
    local k = keysOf(purchase)
    if purchase.daily_reserved == '1' and k.record and redis.call('HGET', k.record, 'user_id') == user then
      kept[#kept + 1] = purchase.unit
    end
  end
  return {1, status, transactions, reason, table.concat(kept, '\n')}
end

-- A batch (`ARGV[1]` = `batch <keys> <arguments> …`): each job in turn, as if alone; else one job.
if string.sub(ARGV[1], 1, 6) == 'batch ' then return eachJob(grantJob) end
return grantJob(KEYS, ARGV)

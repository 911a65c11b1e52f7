--[[
  The business's figures, counted in the step that writes each fulfilment entry (appendEvent), so
  that they are exact through crashes, failover and resharding and never counted twice: an entry
  is written once, and its figures with it.

  countFigures(figures, f): adds entry `f` (its fields by name) to the day's figures, `figures`:
  the bucket's `figures:<YYYY-MM-DD>` (a hash; the UTC day of the step's `now`, named by the
  caller: appendEvent's `events.figures`). A counted entry without it is an error, never a silent
  miss. A field is
  `<figure>|<environment>|<storefront>|<currency>|<product>` (the product last: it may hold
  anything), its value an integer (HINCRBY). Money is Apple's price in milliunits of its currency,
  never converted, never proceeds. What counts (the rest, nothing):
  - a sale: `granted` or `renewed` (not an operator's grant, not a transfer to another user) and
    `released`, bought (`in_app_ownership_type` not FAMILY_SHARED): `purchases` 1, `units` its
    quantity, `gross` price x quantity, or `unpriced` 1 when Apple said no price (a legacy
    receipt); a subscription's first period (`granted` with `expires_at`) `subscriptions_started`,
    and `trials_started` when its offer is a free trial; a later period `renewals`, and
    `trial_conversions` when it follows a free trial's (`converted_from_trial`);
  - `adopted` 1 (bought before the cutover: the old system counted it), `family_shared` 1;
  - a refund: `revoked` from Apple (source `notification` or `refund_history`, not
    FAMILY_REVOKE): `refunds` 1, `refunded_units` its revoked_quantity, `refunds_gross` what it
    gave back: price x revoked_quantity, or, for one item refunded in part (REFUND_PRORATED),
    price x revocation_percentage / 100000; `refunds_unpriced` 1 without a price;
  - `reinstated` 1 and `reinstated_gross` price x reinstated_quantity (a refund reversed);
  - `expired:<expiration_reason>` 1 (`expired:unknown` when Apple said none);
  - `refunds_declined` 1; a `notification` of type CONSUMPTION_REQUEST: `refund_requests` 1 and
    `refund_requests:<consumption_request_reason>` 1 (lowercase; `unknown` when Apple said none);
  - Apple's outcome of a request (the purchase's record keeps the request's reason, which the
    `revoked` and `refund_declined` entries carry as `refund_request_reason`):
    `refunded_after_request:<reason>` 1 with the refund, `declined_after_request:<reason>` 1;
    and by the rule that answered the request (`refund_rule`, as the entries carry it too):
    `answered_by_rule:<rule>` 1 with its `refund_answered` entry, `refunded_by_rule:<rule>` 1 with
    the refund, `declined_by_rule:<rule>` 1;
  - an answer to Apple's real-time retention request: `retention_offered:<rule>` 1 with its
    `retention_offered` entry (`none`: no rule matched, Apple showed its default message); the
    first period bought after it (a `renewed` entry carrying the answer's `retention_rule`):
    `retention_saved:<rule>` 1.

  countStatusChange(figures, f, from, to): a subscription's status moving `from` → `to`
  (applySubscription, in the step that moves it; `f`: environment, product_id): into billing
  trouble (`grace_period` or `billing_retry` from any other) `billing_issues` 1; out of it to
  `active` `billing_recoveries` 1.
]]
local function addFigure(figures, f, name, by)
  if by == 0 then return end
  if not figures then error('countFigures: a `' .. f.event .. '` entry needs the day\'s figures key') end
  -- The entry's cell, built once for all its figures (`_cell`: no entry has such a field).
  local cell = f._cell
  if not cell then
    cell = '|' .. (f.environment or '') .. '|' .. (f.storefront or '') .. '|' .. (f.currency or '') .. '|' .. (f.product_id or '')
    f._cell = cell
  end
  redis.call('HINCRBY', figures, name .. cell, by)
end

local function countSale(figures, f)
  if f.in_app_ownership_type == 'FAMILY_SHARED' then return addFigure(figures, f, 'family_shared', 1) end
  local quantity = tonumber(f.quantity) or 1
  local price = tonumber(f.price)
  addFigure(figures, f, 'purchases', 1)
  addFigure(figures, f, 'units', quantity)
  if price then addFigure(figures, f, 'gross', price * quantity) else addFigure(figures, f, 'unpriced', 1) end
  if f.event == 'renewed' then
    addFigure(figures, f, 'renewals', 1)
    if f.converted_from_trial == '1' then addFigure(figures, f, 'trial_conversions', 1) end
    if f.retention_rule then addFigure(figures, f, 'retention_saved:' .. f.retention_rule, 1) end
  elseif f.event == 'granted' and f.expires_at and f.expires_at ~= '' then
    addFigure(figures, f, 'subscriptions_started', 1)
    if f.offer_discount_type == 'FREE_TRIAL' then addFigure(figures, f, 'trials_started', 1) end
  end
end

local function countRefund(figures, f)
  local taken = tonumber(f.revoked_quantity) or tonumber(f.quantity) or 1
  local price = tonumber(f.price)
  local share = tonumber(f.revocation_percentage)
  addFigure(figures, f, 'refunds', 1)
  addFigure(figures, f, 'refunded_units', taken)
  -- A refund the customer asked for (a CONSUMPTION_REQUEST before it): Apple's outcome, by reason.
  if f.refund_request_reason then addFigure(figures, f, 'refunded_after_request:' .. string.lower(f.refund_request_reason), 1) end
  if f.refund_rule then addFigure(figures, f, 'refunded_by_rule:' .. f.refund_rule, 1) end
  if not price then return addFigure(figures, f, 'refunds_unpriced', 1) end
  if f.revocation_type == 'REFUND_PRORATED' and share and (tonumber(f.quantity) or 1) == 1 then
    addFigure(figures, f, 'refunds_gross', math.floor(price * share / 100000))
  else
    addFigure(figures, f, 'refunds_gross', price * taken)
  end
end

local function countFigures(figures, f)
  local event, source = f.event, f.source
  if (event == 'granted' or event == 'renewed') and source ~= 'operator' and not f.transferred_from
    or event == 'released' then
    countSale(figures, f)
  elseif event == 'adopted' then
    addFigure(figures, f, 'adopted', 1)
  elseif event == 'revoked' and (source == 'notification' or source == 'refund_history')
    and f.revocation_type ~= 'FAMILY_REVOKE' then
    countRefund(figures, f)
  elseif event == 'reinstated' then
    local price = tonumber(f.price)
    addFigure(figures, f, 'reinstated', 1)
    if price then addFigure(figures, f, 'reinstated_gross', price * (tonumber(f.reinstated_quantity) or 1)) end
  elseif event == 'expired' then
    local reason = f.expiration_reason
    addFigure(figures, f, 'expired:' .. ((reason and reason ~= '') and reason or 'unknown'), 1)
  elseif event == 'refund_declined' then
    addFigure(figures, f, 'refunds_declined', 1)
    if f.refund_request_reason then
      addFigure(figures, f, 'declined_after_request:' .. string.lower(f.refund_request_reason), 1)
    end
    if f.refund_rule then addFigure(figures, f, 'declined_by_rule:' .. f.refund_rule, 1) end
  elseif event == 'notification' and f.notification_type == 'CONSUMPTION_REQUEST' then
    local reason = f.consumption_request_reason
    addFigure(figures, f, 'refund_requests', 1)
    addFigure(figures, f, 'refund_requests:' .. ((reason and reason ~= '') and string.lower(reason) or 'unknown'), 1)
  elseif event == 'refund_answered' then
    addFigure(figures, f, 'answered_by_rule:' .. (f.refund_rule or 'unknown'), 1)
  elseif event == 'retention_offered' then
    addFigure(figures, f, 'retention_offered:' .. (f.retention_rule or 'none'), 1)
  end
end

local function countStatusChange(figures, f, from, to)
  local wasTrouble = from == 'grace_period' or from == 'billing_retry'
  local isTrouble = to == 'grace_period' or to == 'billing_retry'
  if isTrouble and not wasTrouble and from then
    addFigure(figures, f, 'billing_issues', 1)
  elseif wasTrouble and to == 'active' then
    addFigure(figures, f, 'billing_recoveries', 1)
  end
end

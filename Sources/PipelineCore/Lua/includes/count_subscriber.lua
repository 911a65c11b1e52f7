--[[
  countSubscriber(subscribers, record): keeps the bucket's live count of subscribers
  (`subscribers`, a hash) true to one subscription's record, in the step that changes the record.
  A subscription is a subscriber while its status is `active` or `grace_period` (it gives its
  entitlements); it then counts, under `<figure>|<environment>|<storefront>|<currency>|<product>`
  (the product last: it may hold anything), in `active` 1, in `trials` 1 while its latest period
  is a free trial's, and in `mrr` its latest period's price as a month's (`period_mrr`, milliunits
  of `period_currency`: the grant stage's estimate from the period's length; absent for a legacy
  receipt, which says no price).

  The record keeps what it counts in (`counted`: `<environment>|<storefront>|<currency>|<mrr>|<trial>|<product>`,
  or empty): a change takes that out and puts the new in, so the hash is always the sum of its
  records' `counted`, whatever order news comes in, and a step run again counts nothing twice.
  A record moved to another bucket (a migration) keeps its `counted` in the bucket it left: a
  report sums every bucket's.
]]
--- @include "sale_field"

local function subscriberCells(counted)
  local parts, start = {}, 1
  for _ = 1, 5 do
    local bar = string.find(counted, '|', start, true)
    parts[#parts + 1] = string.sub(counted, start, bar - 1)
    start = bar + 1
  end
  local cell = parts[1] .. '|' .. parts[2] .. '|' .. parts[3] .. '|' .. string.sub(counted, start)
  return cell, tonumber(parts[4]) or 0, parts[5] == '1'
end

local function addSubscriber(subscribers, counted, sign)
  if counted == '' then return end
  local cell, mrr, trial = subscriberCells(counted)
  local function add(field, by)
    -- A cell back at 0 goes: the hash holds only what is.
    if redis.call('HINCRBY', subscribers, field, by) == 0 then redis.call('HDEL', subscribers, field) end
  end
  add('active|' .. cell, sign)
  if trial then add('trials|' .. cell, sign) end
  if mrr ~= 0 then add('mrr|' .. cell, sign * mrr) end
end

local function countSubscriber(subscribers, record)
  if not subscribers then error('countSubscriber: a subscription\'s step needs its bucket\'s `subscribers` key') end
  local r = redis.call('HMGET', record, 'status', 'environment', 'period_storefront', 'period_currency', 'period_mrr',
    'period_offer', 'product_id', 'counted')
  local now = ''
  if r[1] == 'active' or r[1] == 'grace_period' then
    now = (r[2] or '') .. '|' .. (r[3] or '') .. '|' .. (r[4] or '') .. '|' .. (r[5] or '0') .. '|'
      .. (r[6] == 'FREE_TRIAL' and '1' or '0') .. '|' .. (r[7] or '')
  end
  local before = r[8] or ''
  if now == before then return end
  addSubscriber(subscribers, before, -1)
  addSubscriber(subscribers, now, 1)
  redis.call('HSET', record, 'counted', now)
end

-- A 12-month commitment's fields of a period, kept on the subscription's record (keepPeriod).
local function commitmentFields()
  return {'commitment_period', 'commitment_periods', 'commitment_expires_at', 'commitment_price'}
end

-- A period's fields as the subscription's record keeps them while it is the latest (`period` of
-- applySubscription's news): its offer, currency and storefront (the grant's `sale`: name,
-- value…) and its price as a month's (`mrr`, the grant stage's estimate; '' without one); and
-- its `billing_plan_type` with, within a 12-month commitment, the commitment's fields, where
-- the transaction says them.
local function periodOf(sale, mrr)
  local period = {'period_offer', saleField(sale, 'offer_discount_type'), 'period_currency', saleField(sale, 'currency'),
    'period_storefront', saleField(sale, 'storefront'), 'period_mrr', mrr or ''}
  for _, name in ipairs({'billing_plan_type', unpack(commitmentFields())}) do
    local value = saleField(sale, name)
    if value ~= '' then
      period[#period + 1] = name
      period[#period + 1] = value
    end
  end
  return period
end

-- `fields` (name, value, …) on the record, and each of `owned` that they lack taken off it.
local function keepFields(record, fields, owned)
  if #fields > 0 then redis.call('HSET', record, unpack(fields)) end
  local given, gone = {}, {}
  for i = 1, #fields, 2 do given[fields[i]] = true end
  for _, name in ipairs(owned) do
    if not given[name] then gone[#gone + 1] = name end
  end
  if #gone > 0 then redis.call('HDEL', record, unpack(gone)) end
end

-- A period's fields on the record. A period that says its billing plan (a signed transaction of
-- API 1.21 on) says the commitment too: the commitment's fields it lacks are taken off (the
-- subscription left its commitment). One that does not (a legacy receipt) leaves them as they are.
local function keepPeriod(record, period)
  for i = 1, #period, 2 do
    if period[i] == 'billing_plan_type' then return keepFields(record, period, commitmentFields()) end
  end
  redis.call('HSET', record, unpack(period))
end

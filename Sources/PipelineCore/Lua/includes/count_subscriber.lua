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

-- A subscription's period just granted (`grant_purchases`, `release_held_purchase`): when it is
-- the record's latest, the record keeps its offer, currency and storefront (the period's `sale`:
-- name, value…) and its price as a month's (`mrr`, the grant stage's estimate), and what the
-- subscription counts in follows. An older period granted late changes nothing.
local function keepLatestPeriod(subscribers, subscription, tx, sale, mrr)
  if redis.call('HGET', subscription, 'latest_transaction_id') ~= tx then return end
  local offer, currency, storefront = '', '', ''
  for i = 1, #(sale or {}) - 1, 2 do
    local name = sale[i]
    if name == 'offer_discount_type' then offer = sale[i + 1]
    elseif name == 'currency' then currency = sale[i + 1]
    elseif name == 'storefront' then storefront = sale[i + 1] end
  end
  redis.call('HSET', subscription, 'period_offer', offer, 'period_currency', currency, 'period_storefront', storefront,
    'period_mrr', mrr or '')
  countSubscriber(subscribers, subscription)
end

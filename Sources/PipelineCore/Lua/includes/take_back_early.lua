--[[
  A consumable Apple refunded in part before it was granted (`refunded:<unit>` holds
  `<ms>:<percentage>`; a refund in whole holds `<ms>` alone) is granted all the same, and the
  items the refund took back are taken back in the same step (`grant_purchases`,
  `release_held_purchase`).

  earlyShare(refunded, kind, quantity): how many items the remembered refund takes back, its
  percentage and the quantity; nil for no refund, a refund in whole, or what is not a consumable.

  takeBackEarly(k, kind, quantity, now): just after the grant, the record's `revoked_quantity`,
  one `revoked` entry, the share counted (`refunds-prorated:<user>`); the mark deleted.
  k: refunded, record, stream, events (the users' index), prorated.
]]
--- @include "grant_entry"
--- @include "append_event"

local function earlyShare(refunded, kind, quantity)
  local marker = redis.call('GET', refunded)
  local share = marker and tonumber(string.match(marker, ':(%d+)$') or '')
  if not share or (kind and kind ~= '') then return nil end
  local items = tonumber(quantity) or 1
  return math.floor(items * share / 100000 + 0.5), share, items
end

local function takeBackEarly(k, kind, quantity, now)
  local taken, share = earlyShare(k.refunded, kind, quantity)
  if not taken then return end
  redis.call('DEL', k.refunded)
  if taken < 1 then return end
  redis.call('HSET', k.record, 'revoked_quantity', taken, 'revocation_percentage', share,
    'revocation_type', 'REFUND_PRORATED', 'partially_revoked_at', now)
  appendEvent(k.stream, k.events, (grantEntry(k.record, {'event', 'revoked', 'source', 'notification'},
    {'revoked_at', now, 'revocation_type', 'REFUND_PRORATED', 'revocation_percentage', share, 'revoked_quantity', taken})))
  redis.call('INCRBY', k.prorated, share)
end

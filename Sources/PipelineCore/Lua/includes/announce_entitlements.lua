--[[
  announceEntitlements(stream, events, user, entitlements, status, product, original, expires, now, source):
  one `entitlement_changed` entry on the fulfilment stream (and the user's index, `events`) per
  entitlement (comma-separated).
]]
--- @include "split_list"
--- @include "append_event"

local function announceEntitlements(stream, events, user, entitlements, status, product, original, expires, now, source)
  for _, e in ipairs(splitList(entitlements)) do
    appendEvent(stream, events, {'event', 'entitlement_changed', 'source', source, 'user_id', user,
      'entitlement', e, 'status', status, 'product_id', product, 'original_transaction_id', original,
      'expires_at', expires or '', 'changed_at', now})
  end
end

--[[
  announceEntitlements(stream, user, entitlements, status, product, original, expires, now, source):
  one `entitlement_changed` entry on the fulfilment stream per entitlement (comma-separated).
]]
--- @include "split_list"

local function announceEntitlements(stream, user, entitlements, status, product, original, expires, now, source)
  for _, e in ipairs(splitList(entitlements)) do
    redis.call('XADD', stream, '*', 'event', 'entitlement_changed', 'source', source, 'user_id', user,
      'entitlement', e, 'status', status, 'product_id', product, 'original_transaction_id', original,
      'expires_at', expires or '', 'changed_at', now)
  end
end

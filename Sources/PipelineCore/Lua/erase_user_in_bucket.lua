#!lua
--[[
  erase_user_in_bucket: erasure of one user (`DELETE /v1/users/{id}`, `iapctl user erase`), one
  bucket's part, in one step. The ledger must not forget a claim, so the user's purchases stay,
  under a pseudonym: each grant record, hold, owner and subscription record naming the user names
  the pseudonym instead (a grant transferred from the user too); the fulfilment entries naming the
  user are deleted (XDEL: the caller found them); the user's indexes (their range of `user-events`
  too) and webhook deliveries in this bucket are deleted, to every destination. Claims (`txn:<unit>`) are untouched: a purchase erased is still never
  granted twice. Safe to repeat.

  Input:
    KEYS[1] purchases          `purchases:<user>`
    KEYS[2] lifetime           `lifetime:<user>`
    KEYS[3] userSubscriptions  `user-subscriptions:<user>`
    KEYS[4] refunds            `refunds:<user>`
    KEYS[5] prorated           `refunds-prorated:<user>`
    KEYS[6] webhookEvents      `webhook:events:<user>`
    KEYS[7] webhookBusy        `webhook:busy`
    KEYS[8] stream             the fulfilment stream
    KEYS[9] events             the bucket's `user-events`
    KEYS[10…] per purchase, as `records` names them: its grant record, hold, owner; per
             subscription its record; then per webhook destination other than `default`, as
             `webhooks` names them: `webhook:to:<name>:events:<user>`, `webhook:to:<name>:busy`
    ARGV[1] arguments          JSON: user, pseudonym, records (KEYS indexes of grant records,
                               holds, owners, subscription records), entries (stream ids),
                               webhooks ([events, busy] KEYS indexes per other destination)
  Output:
    {records renamed, entries deleted}
]]
--- @include "append_event"

local a = cjson.decode(ARGV[1])
local renamed = 0

-- A hash's `field` names the pseudonym instead of the user.
local function rename(key, field)
  if redis.call('HGET', key, field) == a.user then
    redis.call('HSET', key, field, a.pseudonym)
    renamed = renamed + 1
  end
end

for _, index in ipairs(a.records or {}) do
  local key = KEYS[index]
  local kind = redis.call('TYPE', key).ok
  if kind == 'hash' then
    rename(key, 'user_id')
    rename(key, 'transferred_from')
  elseif kind == 'string' and redis.call('GET', key) == a.user then
    redis.call('SET', key, a.pseudonym)
    renamed = renamed + 1
  end
end
local deleted = 0
for _, id in ipairs(a.entries or {}) do deleted = deleted + redis.call('XDEL', KEYS[8], id) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
redis.call('SREM', KEYS[7], a.user)
for _, pair in ipairs(a.webhooks or {}) do
  redis.call('DEL', KEYS[pair[1]])
  redis.call('SREM', KEYS[pair[2]], a.user)
end
redis.call('ZREMRANGEBYLEX', KEYS[9], userEventsRange(a.user))
return {renamed, deleted}

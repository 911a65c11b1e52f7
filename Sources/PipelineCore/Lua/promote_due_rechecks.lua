#!lua
--[[
  promote_due_rechecks: turns the subscriptions whose re-check is due into re-check jobs on the
  verify queue, at most `limit` a call (O(batch): the zset is read from its low end only). Each
  gets a ticket (`<ticket_prefix>recheck-<original>-<now>-<try>`: the prefix names the bucket
  when there are several, `3.`; status `queued`, source `recheck`) and a job
  crediting the subscription's owner; its try is counted on the record (`recheck_tries`) and its
  next due time set as if this try settles nothing (waits doubling from `after_ms`, at most
  `longest_ms`), so a re-check Apple cannot answer is asked again, never dropped. The step that
  applies Apple's answer reschedules it from the new state. A subscription without a record,
  revoked, or past its tries, leaves the zset.

  The records of the due subscriptions, and the tickets (whose ids hold the try each record
  counts), are keys this script learns by reading: when one is not declared (`records`,
  `tickets`), it answers {-2, needed} having changed nothing; the caller declares them and calls
  again.

  Input:
    KEYS[1] rechecks      the re-check schedule (zset: original → due, ms)
    KEYS[2] verifyQueue   the verify stage's queue
    KEYS[3…] as ARGV names them: records (`records`: original → index), tickets (`tickets`:
             original → {index, try})
    ARGV[1] arguments     JSON: now, limit, ttl (s), recheck (the schedule), ticket_prefix,
                          records?, tickets?
  Output:
    how many jobs were queued; {-2, needed (JSON: records (originals), tickets ([{original, try}]))}
    declare these keys and call again
]]
--- @include "new_ticket"
local rechecks, verifyQueue = KEYS[1], KEYS[2]
local a = cjson.decode(ARGV[1])
local now, policy = a.now, a.recheck
local records, tickets = a.records or {}, a.tickets or {}

local due = redis.call('ZRANGEBYSCORE', rechecks, '-inf', now, 'LIMIT', 0, tonumber(a.limit))
local needRecords, needTickets = {}, {}
for _, otx in ipairs(due) do
  if not records[otx] then
    needRecords[#needRecords + 1] = otx
  else
    local try = tonumber(redis.call('HGET', KEYS[records[otx]], 'recheck_tries') or '0') + 1
    local t = tickets[otx]
    if not t or tonumber(t.try) ~= try then needTickets[#needTickets + 1] = {original = otx, try = try} end
  end
end
if #needRecords > 0 or #needTickets > 0 then
  return {-2, cjson.encode({records = needRecords, tickets = needTickets})}
end

local queued = 0
for _, otx in ipairs(due) do
  local record, ticketKey = KEYS[records[otx]], KEYS[tickets[otx].index]
  local s = redis.call('HMGET', record, 'user_id', 'status', 'environment', 'recheck_tries', 'latest_transaction_id', 'expires_at',
    'history_revision')
  local tries = tonumber(s[4] or '0') + 1
  if not s[1] or s[2] == 'revoked' or (tries > 2 + tonumber(policy.max_tries) and s[2] ~= 'active') then
    redis.call('ZREM', rechecks, otx)
  else
    redis.call('HSET', record, 'recheck_tries', tries, 'rechecked_at', now)
    local ticket = a.ticket_prefix .. 'recheck-' .. otx .. '-' .. now .. '-' .. tries
    newTicket(ticketKey, s[1], now, tonumber(a.ttl), {'source', 'recheck', 'original_transaction_id', otx})
    local environment = s[3]
    if not environment or environment == '' then environment = 'Production' end
    redis.call('LPUSH', verifyQueue, cjson.encode({ticket = ticket, stage = 'verify', user_id = s[1], source = 'recheck',
      recheck = {original_transaction_id = otx, environment = environment, latest_transaction_id = s[5] or '',
        expires_at = s[6] or '', history_revision = s[7] or ''}, attempts = 0, enqueued_at = tonumber(now)}))
    local wait = math.min(math.max(tonumber(policy.after_ms), 1000) * 2 ^ (tries - 1), tonumber(policy.longest_ms))
    redis.call('ZADD', rechecks, string.format('%.0f', tonumber(now) + wait), otx)
    queued = queued + 1
  end
end
return queued

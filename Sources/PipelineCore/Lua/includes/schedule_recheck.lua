--[[
  scheduleRecheck(rechecks, record, otx, status, expires, now, reset, cause, policy): when
  subscription `otx` (its record `record`) is next asked about, in the zset `rechecks`.

  `policy` is the re-check schedule (`RecheckSchedule`: before_ms, after_ms, max_tries,
  longest_ms); nil: nothing is scheduled. While active: `before_ms` before its period ends;
  after it ended: `after_ms` after; then waits doubling from `after_ms` (at least a second, at
  most `longest_ms`) for `max_tries` more tries (for ever while we believe it active). Never
  once a re-check found it expired, or it was revoked. An `EXPIRED` notification gets one
  closing re-check `after_ms` later (it fills any period a lost notification skipped); a late
  grant of a period that is over is not Apple saying it ended: it is asked about. `reset`: a new
  period, whose tries count from zero.
]]
local function scheduleRecheck(rechecks, record, otx, status, expires, now, reset, cause, policy)
  if not policy then return end
  local settled = status == 'revoked' or (status == 'expired' and cause == 'recheck')
  if settled or not expires or expires == '' then
    redis.call('ZREM', rechecks, otx)
    redis.call('HDEL', record, 'recheck_tries')
    return
  end
  local tries = 0
  if reset then
    redis.call('HDEL', record, 'recheck_tries')
  else
    tries = tonumber(redis.call('HGET', record, 'recheck_tries') or '0')
  end
  local e, n = tonumber(expires), tonumber(now)
  local before, after = tonumber(policy.before_ms), tonumber(policy.after_ms)
  local due
  if status == 'expired' and cause ~= 'grant' then
    due = n + math.max(after, 1000)
  elseif status == 'active' and n < e - before then
    due = e - before
  elseif n < e + after then
    due = e + after
  else
    -- Only a subscription Apple holds in billing retry is let go; one we believe active is
    -- asked about again (at most `longest_ms` apart) until Apple settles it.
    if tries >= 2 + tonumber(policy.max_tries) and status ~= 'active' then
      redis.call('ZREM', rechecks, otx)
      return
    end
    due = n + math.min(math.max(after, 1000) * 2 ^ math.max(tries - 2, 0), tonumber(policy.longest_ms))
  end
  redis.call('ZADD', rechecks, string.format('%.0f', due), otx)
end

--[[
  settleHold(k, h, outcome, why, a): an operator's decision on hold `h` (`outcome` `granted` or
  `rejected`, for `why`). Records it on the hold (`released`/`rejected`, `decided_at`,
  `decided_by`, `decision_reason`, `note`) and takes the unit off the index. The hold's ticket
  (in the bucket its id names) is told in a step of its own: `settle_held_ticket`. Returns the
  decision.

  k: hold, holds (the index). a: now, operator, note.
]]
local function settleHold(k, h, outcome, why, a)
  local decision = outcome == 'granted' and 'released' or 'rejected'
  redis.call('HSET', k.hold, 'status', decision, 'decided_at', a.now, 'decided_by', a.operator,
    'decision_reason', why, 'note', a.note)
  redis.call('ZREM', k.holds, h.unit)
  return decision
end

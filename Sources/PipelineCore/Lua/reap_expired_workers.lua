#!lua
--[[
  reap_expired_workers: returns the in-flight jobs of workers whose heartbeat is older than the
  lease to the front of their queue, counting each redelivery on the ticket; a job redelivered
  too often is dead-lettered as poison. One worker at a time runs it, under a short lock (its
  holder may run it again). A silent worker stays in the set, reaped every round, until it has
  been silent for `forget_ms`: a BLMOVE it sent before going silent can still deliver a job into
  its list after the first round.

  The in-flight lists of the expired workers, and the tickets of the jobs in them, are keys this
  script learns by reading: when one is not declared (`inflight`, `tickets`), it answers
  {-2, needed} having changed nothing; the caller declares them and calls again.

  Input:
    KEYS[1] workers    the worker set (zset: member → last heartbeat, ms)
    KEYS[2] dead       the dead letters
    KEYS[3] lock       the reaper's lock
    KEYS[4] verify     the queues of the stages, by name:
    KEYS[5] dedupe
    KEYS[6] grant
    KEYS[7] notify
    KEYS[8] webhook
    KEYS[9…] as ARGV names them: in-flight lists (`inflight`: member → index), tickets'
             hashes (`tickets`: ticket id → index; 0 for a ticket in another bucket: the job
             is none of ours and is dead-lettered, `foreign_ticket`)
    ARGV[1] arguments  JSON: lease_ms, max_redeliveries, lock_ms, reaper, channel, forget_ms,
                       inflight?, tickets?, now? (a test's pinned time; else Redis's TIME)
  Output:
    {workers that lost jobs, jobs returned, jobs dead-lettered}; {-1, 0, 0} another reaper holds
    the lock; {-2, needed (JSON: members, tickets)} declare these keys and call again
]]
--- @include "redis_now"

local workers, dead, lock = KEYS[1], KEYS[2], KEYS[3]
local queues = {verify = KEYS[4], dedupe = KEYS[5], grant = KEYS[6], notify = KEYS[7], webhook = KEYS[8]}
local a = cjson.decode(ARGV[1])
local inflightOf, ticketOf = a.inflight or {}, a.tickets or {}
local now = redisNow(a.now)

local holder = redis.call('GET', lock)
if holder and holder ~= a.reaper then return {-1, 0, 0} end

-- A job as the reaper reads it: its stage's queue (nil: a worker of no known stage) and, when
-- it decodes to a job, the id of the ticket its steps update: a part's own (`part`), else its ticket.
local function readJob(member, payload)
  local queue = queues[string.match(member, '^(%a+):') or '']
  local ok, job = pcall(cjson.decode, payload)
  if ok and type(job) == 'table' and type(job.part) == 'string' then return queue, job.part end
  if ok and type(job) == 'table' and type(job.ticket) == 'string' then return queue, job.ticket end
  return queue, nil
end

-- The in-flight lists and tickets this round will touch that the caller has not declared.
local function undeclared(expired)
  local members, tickets = {}, {}
  for _, member in ipairs(expired) do
    if not inflightOf[member] then
      members[#members + 1] = member
    else
      for _, payload in ipairs(redis.call('LRANGE', KEYS[inflightOf[member]], 0, -1)) do
        local queue, ticket = readJob(member, payload)
        if queue and ticket and not ticketOf[ticket] then tickets[#tickets + 1] = ticket end
      end
    end
  end
  return members, tickets
end

-- Why a job of a dead worker is dead-lettered instead of returned (nil: it goes back), counting
-- its redelivery on its ticket; and the ticket's key when it exists.
local function poisonReason(queue, ticket)
  if not queue then return 'unknown_stage', nil end
  if not ticket then return 'undecodable_job', nil end
  -- A job whose ticket lies in another bucket is none of ours: nothing counts its redeliveries.
  if ticketOf[ticket] == 0 then return 'foreign_ticket', nil end
  local ticketKey = KEYS[ticketOf[ticket]]
  if redis.call('EXISTS', ticketKey) == 0 then return nil, nil end
  if redis.call('HINCRBY', ticketKey, 'redeliveries', 1) > tonumber(a.max_redeliveries) then
    return 'poison_redelivered', ticketKey
  end
  return nil, ticketKey
end

local function deadLetter(member, payload, ticket, reason, ticketKey)
  redis.call('LPUSH', dead, cjson.encode({job = payload, stage = string.match(member, '^(%a+):') or 'unknown',
    reason = reason, error = 'worker ' .. member .. ' lost its lease', attempts = 0, at = now, ticket = ticket}))
  if ticketKey then
    redis.call('HSET', ticketKey, 'status', 'dead', 'reason', reason, 'updated_at', now)
    redis.call('SPUBLISH', a.channel, ticket)
  end
end

-- Empties one dead worker's list: newest first, each pushed to the consuming end of its queue,
-- so the oldest ends up first in line. Returns how many went back and how many died.
local function reapWorker(member)
  local inflight = KEYS[inflightOf[member]]
  local returned, deadLettered = 0, 0
  while true do
    local payload = redis.call('LPOP', inflight)
    if not payload then break end
    local queue, ticket = readJob(member, payload)
    local reason, ticketKey = poisonReason(queue, ticket)
    if reason then
      deadLetter(member, payload, ticket, reason, ticketKey)
      deadLettered = deadLettered + 1
    else
      redis.call('RPUSH', queue, payload)
      returned = returned + 1
    end
  end
  return returned, deadLettered
end

-- A worker silent past `forget_ms` leaves the set: its last BLMOVE has ended by then.
local function forgetIfLongSilent(member)
  local seen = tonumber(redis.call('ZSCORE', workers, member))
  if seen and seen < now - tonumber(a.forget_ms) then redis.call('ZREM', workers, member) end
end

local expired = redis.call('ZRANGEBYSCORE', workers, '-inf', now - tonumber(a.lease_ms))
local members, tickets = undeclared(expired)
if #members > 0 or #tickets > 0 then return {-2, cjson.encode({members = members, tickets = tickets})} end

redis.call('SET', lock, a.reaper, 'PX', a.lock_ms)
local reaped, returned, deadLettered = 0, 0, 0
for _, member in ipairs(expired) do
  local back, died = reapWorker(member)
  if back + died > 0 then reaped = reaped + 1 end
  returned, deadLettered = returned + back, deadLettered + died
  forgetIfLongSilent(member)
end
return {reaped, returned, deadLettered}

#!lua
--[[
  submit_receipt: intake: stores a new ticket and queues its job, unless this user sent this
  receipt before (then it names that ticket). The rate limits are counted before, for a new
  submission only, in their own steps (`take_submission_permit`): their windows lie in other
  slots than the receipt's bucket.

  A resubmission is known by its receipt key, which names the ticket it produced; that ticket's
  hash is a key this script can only learn by reading, so the caller declares it (KEYS[4],
  `existing` in ARGV) once the script has named it: the first call answers {-2, ticket} and
  changes nothing; the second, with that ticket's key declared, answers for it. A ticket of
  another bucket (an id from before buckets, put by a migration where its hash says, in another
  slot) is not declared: `elsewhere` says so, and it stands while its receipt key does (they were
  copied together, with the same time to live).

  Backpressure: a new submission is refused ({-3, depth}) once the bucket's jobs waiting to be
  verified (its verify queue and its retry set) reach `max_depth` (its share of
  `IAP_MAX_QUEUE_DEPTH`; 0: no limit). A resubmission is answered first: it never waits.

  Batch form: several submissions of one bucket in one call, each as if alone (`includes/each_job`):
    ARGV[1] `batch <keys> <arguments> …`, then each submission's KEYS and ARGV as below, in turn.
    Output: the list of their answers.

  Input:
    KEYS[1] receipt       `receipt:<digest>` (string: the ticket it produced)
    KEYS[2] ticket        the new ticket's hash
    KEYS[3] verifyQueue   the verify stage's queue
    KEYS[4] retry         the retry set (its jobs wait too)
    KEYS[5] existing      optional: the hash of the ticket `existing` names
    ARGV[1] job           the job
    ARGV[2] arguments     JSON: ticket, now, ttl (s), user_id, product_id, transaction_id, channel,
                          client_key ('' on an intake without keys: the key that signed it, kept
                          on the ticket so only that key reads it), existing?, elsewhere? (true:
                          that ticket lies in another bucket), max_depth (0: none)
  Output:
    {1, ticket} queued; {0, existing ticket} a resubmission; {-2, ticket} declare that ticket's
    hash as KEYS[5] and call again; {-3, depth} refused: the queue is full
]]
--- @include "each_job"
--- @include "new_ticket"

-- One submission: everything below, as if the script were called for it alone.
local function submitOne(KEYS, ARGV)
  local receipt, ticket, verifyQueue, retry, existingTicket = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
  local a = cjson.decode(ARGV[2])
  local existing = redis.call('GET', receipt)
  if existing then
    if existing ~= a.existing then return {-2, existing} end
    if a.elsewhere then return {0, existing} end
    if not existingTicket then return {-2, existing} end
    if redis.call('EXISTS', existingTicket) == 1 then return {0, existing} end
  end

  local maxDepth = tonumber(a.max_depth)
  if maxDepth > 0 then
    local depth = redis.call('LLEN', verifyQueue) + redis.call('ZCARD', retry)
    if depth >= maxDepth then return {-3, tostring(depth)} end
  end

  redis.call('SET', receipt, a.ticket, 'EX', a.ttl)
  local fields = {}
  for _, name in ipairs({'product_id', 'transaction_id', 'client_key'}) do
    if a[name] ~= '' then fields[#fields + 1] = name; fields[#fields + 1] = a[name] end
  end
  newTicket(ticket, a.user_id, a.now, a.ttl, fields)
  redis.call('LPUSH', verifyQueue, ARGV[1])
  redis.call('SPUBLISH', a.channel, a.ticket)
  return {1, a.ticket}
end

-- A batch (`ARGV[1]` = `batch <keys> <arguments> …`): each submission in turn, as if alone; else one.
if string.sub(ARGV[1], 1, 6) == 'batch ' then return eachJob(submitOne) end
return submitOne(KEYS, ARGV)

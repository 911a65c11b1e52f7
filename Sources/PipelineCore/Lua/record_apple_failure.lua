#!lua
--[[
  record_apple_failure: the fleet's breaker of one of Apple's services (verifyReceipt, the Server
  API) hears that the service failed a verify job (HTTP 5xx, 21005, a retryable 211xx, a
  timeout, a refused connection) and says whether the failure spends one of the job's attempts. It spends only when Apple answered someone since the job last
  failed (on its first failure: within `quiet_ms`): then the failure is the receipt's own. While
  Apple answers nobody nothing is spent, and once `min_failures` such failures came with no
  answer for `quiet_ms` the breaker opens: jobs for the service then wait in the retry set without
  asking, but for one probe every `probe_ms` (`take_apple_probe`), until an answer closes it
  (`record_apple_answers`). Time is Redis's own (TIME).

  Input:
    KEYS[1] breaker    the service's Apple breaker (hash: last_answer, failures, opened_at, probe_at,
                       last_reason, last_failure, openings, closed_at)
    ARGV[1] arguments  JSON: reason, failed_before? (ms: the job's previous failure), min_failures,
                       quiet_ms, probe_ms, now? (a test's pinned time)
  Output:
    {spends (1: the job spends an attempt, 0: not), state (0 closed, 1 opened by this failure,
    2 open already), now (ms: the job's failure time)}
]]
--- @include "redis_now"

local breaker = KEYS[1]
local a = cjson.decode(ARGV[1])
local now = redisNow(a.now)
local failures = redis.call('HINCRBY', breaker, 'failures', 1)
redis.call('HSET', breaker, 'last_reason', a.reason, 'last_failure', now)
if redis.call('HEXISTS', breaker, 'opened_at') == 1 then
  -- A probe failed, or a job in flight when it opened: the next probe waits its turn.
  redis.call('HSET', breaker, 'probe_at', now + tonumber(a.probe_ms))
  return {0, 2, now}
end
local lastAnswer = tonumber(redis.call('HGET', breaker, 'last_answer') or '-1')
local quietSince = now - tonumber(a.quiet_ms)
local before = a.failed_before
if before == nil or before == cjson.null then before = quietSince else before = tonumber(before) end
if lastAnswer >= before then return {1, 0, now} end
if failures >= tonumber(a.min_failures) and lastAnswer < quietSince then
  redis.call('HSET', breaker, 'opened_at', now, 'probe_at', now + tonumber(a.probe_ms))
  redis.call('HINCRBY', breaker, 'openings', 1)
  return {0, 1, now}
end
return {0, 0, now}

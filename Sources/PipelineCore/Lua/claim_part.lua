#!lua
--[[
  claim_part: dedupe stage, a receipt whose purchases lie in several buckets: one part, on the
  part's bucket. Creates the part's own ticket hash (`ticket:<bucket>.<ticket>`: what the part's
  steps check and update in place of the client's ticket, which lives in another bucket), claims
  the part's grant units for the client's ticket (`SET … NX`, as `claim_purchases` does) and
  queues the part's grant job, once: a part whose hash exists was queued before (the dedupe job
  was redelivered), and nothing is done again.

  Input:
    KEYS[1]   part         the part's ticket hash
    KEYS[2]   grantQueue   the part's bucket's grant queue
    KEYS[3…]  its grant units' claim keys (`txn:<unit>`)
    ARGV[1] arguments      JSON: job (the part's grant job), ticket (the client's ticket id),
                           user_id, now, ttl_ms
  Output:
    1 queued, 0 queued before (nothing changed)
]]

local part, grantQueue = KEYS[1], KEYS[2]
local a = cjson.decode(ARGV[1])
if redis.call('EXISTS', part) == 1 then return 0 end
redis.call('HSET', part, 'status', 'queued', 'parent', a.ticket, 'user_id', a.user_id, 'created_at', a.now,
  'updated_at', a.now)
redis.call('PEXPIRE', part, a.ttl_ms)
for k = 3, #KEYS do
  redis.call('SET', KEYS[k], a.ticket, 'NX')
end
redis.call('LPUSH', grantQueue, a.job)
return 1

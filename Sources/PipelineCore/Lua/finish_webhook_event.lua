#!lua
--[[
  finish_webhook_event: a webhook delivery ended for the event at the head of the user's list
  (delivered, or too old and dead-lettered with `dead_entry`): removes it (unless an earlier run
  of this job did), then queues the user's job again at the back of the queue (other users'
  turns come first) while events remain, else lets the user go (`busy`) and deletes the ticket. A
  replayed event (`replay`) touches no list: its ticket is deleted.

  Input:
    KEYS[1] inflight       the worker's in-flight list
    KEYS[2] events         `webhook:events:<user>`
    KEYS[3] busy           `webhook:busy`
    KEYS[4] webhookQueue   the webhook stage's queue
    KEYS[5] ticket         the job's ticket hash
    KEYS[6] dead           the dead letters
    ARGV[1] taken          the job as taken
    ARGV[2] arguments      JSON: user, event_id, next, now, replay?, dead_entry?, ttl (s)
  Output:
    1 done, 0 the worker no longer holds the job, -1 its ticket is gone (a job nobody queued:
    dead-lettered as `ticket_missing`, like any stage's)
]]
--- @include "ack_job"

local inflight, events, busy, webhookQueue, ticket, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local acked = ackJob(inflight, ticket, ARGV[1])
if acked ~= 1 then return acked end
local a = cjson.decode(ARGV[2])
if a.dead_entry then redis.call('LPUSH', dead, a.dead_entry) end
if a.replay then
  redis.call('DEL', ticket)
  return 1
end
local head = redis.call('LINDEX', events, 0)
if head and a.event_id ~= '' and cjson.decode(head).id == a.event_id then redis.call('LPOP', events) end
if redis.call('LLEN', events) > 0 then
  redis.call('LPUSH', webhookQueue, a.next)
  redis.call('HSET', ticket, 'status', 'queued', 'attempts', '0', 'updated_at', a.now)
  redis.call('HDEL', ticket, 'last_error')
  redis.call('EXPIRE', ticket, tonumber(a.ttl))
else
  redis.call('SREM', busy, a.user)
  redis.call('DEL', ticket)
end
return 1

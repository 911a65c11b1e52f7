#!lua
--[[
  accept_notification: intake: stores a verified Server Notification and queues it for the
  notify stage, unless its UUID was seen before (Apple delivers the same notification again
  until it gets a 2xx).

  Input:
    KEYS[1] notification   `notification:<uuid>` (string: the ticket that applies it)
    KEYS[2] ticket         the new ticket's hash
    KEYS[3] notifyQueue    the notify stage's queue
    ARGV[1] job            the job
    ARGV[2] arguments      JSON: ticket, now, ttl (s), retention (s), channel, type
  Output:
    {1, ticket} queued; {0, existing ticket} a notification seen before
]]
local notification, ticket, notifyQueue = KEYS[1], KEYS[2], KEYS[3]
local a = cjson.decode(ARGV[2])
local existing = redis.call('GET', notification)
if existing then return {0, existing} end
redis.call('SET', notification, a.ticket, 'EX', a.retention)
redis.call('HSET', ticket, 'status', 'queued', 'attempts', '0', 'user_id', '', 'kind', 'notification',
  'notification_type', a.type, 'created_at', a.now, 'updated_at', a.now)
redis.call('EXPIRE', ticket, a.ttl)
redis.call('LPUSH', notifyQueue, ARGV[1])
redis.call('SPUBLISH', a.channel, a.ticket)
return {1, a.ticket}

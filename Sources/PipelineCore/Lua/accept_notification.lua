#!lua
--[[
  accept_notification: stores a verified Server Notification (the intake's, or one the backfill or
  the sweep found in Apple's history) and queues it for the notify stage, unless its UUID was
  seen before (Apple delivers the same notification again until it gets a 2xx). A stored one
  becomes one `notification` entry on the fulfilment stream, for the backend: its user is the
  owner of its original transaction, else the user its appAccountToken is bound to (`token_user`,
  read by the caller), else none.

  Input:
    KEYS[1] notification   `notification:<uuid>` (string: the ticket that applies it)
    KEYS[2] ticket         the new ticket's hash
    KEYS[3] notifyQueue    the notify stage's queue
    KEYS[4] stream         the fulfilment stream of the notification's bucket
    KEYS[5] events         the bucket's `user-events` (appendEvent)
    KEYS[6] figures        the bucket's `figures:<day>` (countFigures: the day of `now`)
    KEYS[7] owner          `owner:<original_transaction_id>`, when the notification names a purchase
    ARGV[1] job            the job
    ARGV[2] arguments      JSON: ticket, now, ttl (s), retention (s), channel, type, token_user,
                           entry (the stream entry's fields: strings), source (the entry's
                           `source`: `notification`, or `refund_history` for a refund found there)
  Output:
    {1, ticket} queued; {0, existing ticket} a notification seen before
]]
--- @include "new_ticket"
--- @include "add_event"

local notification, ticket, notifyQueue, stream, owner = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[7]
local events = {index = KEYS[5], figures = KEYS[6]}
local a = cjson.decode(ARGV[2])
local existing = redis.call('GET', notification)
if existing then return {0, existing} end
redis.call('SET', notification, a.ticket, 'EX', a.retention)
newTicket(ticket, '', a.now, a.ttl, {'kind', 'notification', 'notification_type', a.type, 'environment', a.entry.environment or ''})
redis.call('LPUSH', notifyQueue, ARGV[1])
local entry = a.entry
entry.event, entry.source, entry.ticket = 'notification', a.source or 'notification', a.ticket
addEvent(stream, events, entry, (owner and redis.call('GET', owner)) or a.token_user or '')
redis.call('SPUBLISH', a.channel, a.ticket)
return {1, a.ticket}

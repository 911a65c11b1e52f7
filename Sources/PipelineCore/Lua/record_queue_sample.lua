#!lua
--[[
  record_queue_sample: an intake's look at the queues, kept for the console's last hour: the
  first sample of each minute is kept (several intakes sample the same minute: one wins), and a
  minute older than the hour kept goes, so the hash holds at most `keep` + 1 minutes.

  Input:
    KEYS[1] history    `queue-history` (hash: minute, ms → the sample's JSON)
    ARGV[1] minute     the sample's minute (ms, a multiple of 60000)
    ARGV[2] sample     its JSON
    ARGV[3] keep       how many minutes before `minute` stay
  Output:
    1 kept, 0 the minute had its sample already
]]
local history, minute, keep = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[3])
if redis.call('HSETNX', history, ARGV[1], ARGV[2]) == 0 then return 0 end
local oldest = minute - keep * 60000
for _, field in ipairs(redis.call('HKEYS', history)) do
  if (tonumber(field) or 0) < oldest then redis.call('HDEL', history, field) end
end
return 1

#!lua
--[[
  split_job: dedupe stage, a receipt whose purchases lie in several buckets, after `claim_part`
  queued each part: acks the dedupe job and names its parts on the client's ticket (`parts`, a
  JSON array of part ids). A part may have reported already (the job was redelivered after its
  parts ran): when every part has, the ticket takes its final status here.

  Input:
    KEYS[1] inflight   the worker's in-flight list
    KEYS[2] ticket     the client's ticket hash
    ARGV[1] taken      the dedupe job as taken
    ARGV[2] arguments  JSON: parts (part ids), ticket, now, channel
  Output:
    1 split, 0 the worker no longer holds the job, -1 its ticket is gone
]]
--- @include "ack_job"
--- @include "finish_parts"

local inflight, ticketKey = KEYS[1], KEYS[2]
local acked = ackJob(inflight, ticketKey, ARGV[1])
if acked ~= 1 then return acked end
local a = cjson.decode(ARGV[2])
redis.call('HSET', ticketKey, 'parts', cjson.encode(a.parts), 'updated_at', a.now)
finishParts(ticketKey, a.ticket, a.now, a.channel)
return 1

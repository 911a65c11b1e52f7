#!lua
--[[
  acknowledge_job: acks a job whose steps are done and recorded elsewhere: a part of a receipt,
  once its outcome is on the client's ticket (`finish_part`).

  Input:
    KEYS[1] inflight   the worker's in-flight list
    KEYS[2] ticket     the job's own ticket hash (a part's)
    ARGV[1] taken      the job as taken
  Output:
    1 acked, 0 the worker no longer holds the job, -1 its ticket is gone
]]
--- @include "ack_job"

return ackJob(KEYS[1], KEYS[2], ARGV[1])

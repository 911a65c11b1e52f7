#!lua
--[[
  take_submission_permit: intake, before `submit_receipt`, for a new submission (not one this
  user sent before: a resubmission is free): counts it in one second's window of a client key
  (`rate:key:<key>:<second>`) or of a user (`rate:user:<user>:<second>`) and says whether the
  limit is spent. Each window is its own step: the key's window is the fleet's, the user's is in
  the user's slot, the receipt's key in its bucket. A refused submission counts too, as a burst
  should (the window lives ten seconds: long enough for a slow caller's
  next step, short enough to cost little).

  Input:
    KEYS[1] window     this second's window
    ARGV[1] limit      new submissions allowed in it (at least 1)
  Output:
    1 within the limit, 0 spent (answer 429)
]]

local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], 10) end
if count > tonumber(ARGV[1]) then return 0 end
return 1

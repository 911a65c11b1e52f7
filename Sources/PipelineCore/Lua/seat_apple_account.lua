#!lua
--[[
  seat_apple_account: grant stage, before `grant_purchases`, for a purchase that names the Apple
  Account that bought it (`appTransactionId`): gives the user their place in the order in which
  the account's users first bought on it (kept for ever: one user is always the same place), and
  says whether that place is within the limit (`IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`; without one,
  the largest number the caller passes).
  The account's key is its own (another slot than the purchase's bucket), so this is a step of
  its own: exact under concurrency, idempotent per user.

  Input:
    KEYS[1] account    `apple-account:<appTransactionId>` (hash: `u:<user>` → place, from 1;
                       `joined` → how many users so far)
    ARGV[1] arguments  JSON: user, limit
  Output:
    1 within the limit, 0 one user too many (the grant holds the purchase, `apple_account_shared`)
]]

local account = KEYS[1]
local a = cjson.decode(ARGV[1])
local place = redis.call('HGET', account, 'u:' .. a.user)
if not place then
  place = redis.call('HINCRBY', account, 'joined', 1)
  redis.call('HSET', account, 'u:' .. a.user, place)
end
if tonumber(place) <= tonumber(a.limit) then return 1 end
return 0

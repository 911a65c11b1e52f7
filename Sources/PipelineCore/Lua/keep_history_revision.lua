#!lua
--[[
  keep_history_revision: verify stage, after a sync's job went on to dedupe with what Apple's
  history of an Apple Account held: keeps where that history was read to (Apple's `revision`),
  per environment, so the account's next sync asks only for what changed since. Kept only after
  the job is stored on (a crash between them re-reads, and grants nothing twice). The account's
  key is its own slot, so this is a step of its own.

  Input:
    KEYS[1] account    `apple-account:<appTransactionId>` (hash; this writes
                       `revision:<environment>`)
    ARGV[1] arguments  JSON: environment (`Production` or `Sandbox`), revision
  Output:
    1
]]

local account = KEYS[1]
local a = cjson.decode(ARGV[1])
redis.call('HSET', account, 'revision:' .. a.environment, a.revision)
return 1

--[[
  eachJob(step): a batch script's frame. Runs `step(keys, argv)` once per job of the batch, in
  order, each with its own keys and arguments as if the script were called for it alone, and
  answers the list of their answers. `ARGV[1]` is `batch` and each job's sizes
  (`batch <keys> <arguments> <keys> <arguments> …`); `KEYS` are each job's keys in turn, then
  the migration guard (already taken off); the other `ARGV` are each job's arguments in turn.
]]
local function eachJob(step)
  local sizes = {}
  for n in string.gmatch(string.sub(ARGV[1], 7), '%d+') do sizes[#sizes + 1] = tonumber(n) end
  local answers, key, arg = {}, 1, 2
  for i = 1, #sizes - 1, 2 do
    local keys, argv = {}, {}
    for j = 1, sizes[i] do keys[j] = KEYS[key + j - 1] end
    for j = 1, sizes[i + 1] do argv[j] = ARGV[arg + j - 1] end
    key, arg = key + sizes[i], arg + sizes[i + 1]
    answers[#answers + 1] = step(keys, argv)
  end
  return answers
end

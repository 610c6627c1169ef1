--[[
window-top-1.lua: merges one partition's per-minute ranking buckets of a trending window with
exponential-decay weights and returns the partition's top entries. The bucket key names are
built here from the declared prefix, so a 24 h window costs a few bytes of arguments instead of
1,440 key names and weights per partition.

KEYS[1]  per-minute bucket key PREFIX of the partition (…:rank:{<tag>}:min:<metric>:); the bucket
         of unix minute m is KEYS[1] .. m, and the scratch key KEYS[1] .. 'merge' (unlinked before
         the script returns) carries the same hash tag, so all live in one slot
ARGV[1]  current unix minute (integer)
ARGV[2]  window length in minutes (integer >= 1)
ARGV[3]  half-life in minutes (number > 0)
ARGV[4]  entries to return (integer >= 1)

The bucket aged a minutes (a = 0: the current minute) weighs 2^(-a / half-life), as
`bucketWeights` in decay.ts. ZUNIONSTORE takes at most 512 buckets per call (the rest are folded
into the scratch key by further calls), so no window length overflows Lua's stack.
Returns: flat { member, score, member, score, … }: the top ARGV[4] by weighted sum, score
descending, higher member first on ties (ZREVRANGE order).
]]
local prefix = KEYS[1]
local minute = tonumber(ARGV[1])
local windowMinutes = tonumber(ARGV[2])
local halfLife = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local scratch = prefix .. 'merge'
local CHUNK = 512

-- the first ZUNIONSTORE replaces whatever the scratch key held (nothing: each call removes it)
local age = 0
while age < windowMinutes do
  local last = math.min(age + CHUNK, windowMinutes) - 1
  local args = { scratch, 0 }
  local weights = { 'WEIGHTS' }
  if age > 0 then
    args[#args + 1] = scratch
    weights[#weights + 1] = 1
  end
  for a = age, last do
    args[#args + 1] = prefix .. (minute - a)
    weights[#weights + 1] = 2 ^ (-a / halfLife)
  end
  args[2] = #args - 2
  for i = 1, #weights do
    args[#args + 1] = weights[i]
  end
  args[#args + 1] = 'AGGREGATE'
  args[#args + 1] = 'SUM'
  redis.call('ZUNIONSTORE', unpack(args))
  age = last + 1
end
local top = redis.call('ZREVRANGE', scratch, 0, limit - 1, 'WITHSCORES')
-- UNLINK: a partition's window can hold many items; their memory is freed off the main thread
redis.call('UNLINK', scratch)
return top

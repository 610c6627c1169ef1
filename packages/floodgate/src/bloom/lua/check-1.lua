--[[
check-1.lua: tests a batch of items against one Bloom filter shard.

KEYS[1]  shard key: a bitmap of one generation of the filter
ARGV[1]  k: bit offsets per item (integer >= 1)
ARGV[2..] bit offsets, k per item, items one after another

Returns: nil when the shard key does not exist (generation gone or never
         built: the caller must not read that as "absent"); otherwise an
         array with one integer per item: 1 if all its k bits are set
         ("maybe present"), 0 if any is clear ("definitely absent").
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
local k = tonumber(ARGV[1])
local result = {}
local n = 0
for first = 2, #ARGV, k do
  local present = 1
  for i = first, first + k - 1 do
    if redis.call('GETBIT', KEYS[1], ARGV[i]) == 0 then
      present = 0
      break
    end
  end
  n = n + 1
  result[n] = present
end
return result

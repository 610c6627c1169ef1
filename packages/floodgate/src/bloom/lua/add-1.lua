--[[
add-1.lua: sets the bits of a batch of items in one Bloom filter shard, only if the
shard exists (it is pre-allocated when its generation is created), so a
late add never re-creates the shard of a deleted generation.

KEYS[1]  shard key: a bitmap of one generation of the filter
ARGV[1..] bit offsets to set (k per item; the grouping does not matter here)

Returns: 1 when the bits were set; 0 when the shard key does not exist
         (nothing written: the caller re-reads the generation pointer).
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
for i = 1, #ARGV do
  redis.call('SETBIT', KEYS[1], ARGV[i], 1)
end
return 1

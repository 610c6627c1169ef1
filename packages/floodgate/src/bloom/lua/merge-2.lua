--[[
merge-2.lua: merges a shard bitmap a rebuild built in process memory into the shard of
its generation: the shard becomes shard OR staged, so bits that `add` calls
set meanwhile are kept. Only if the shard exists (it is pre-allocated when
its generation is created): a merge never re-creates the shard of a dropped
generation. The staged key is deleted either way.

KEYS[1]  shard key: a bitmap of one generation of the filter
KEYS[2]  staged key: the same bitmap's bits from the rebuild (same hash tag)

Returns: 1 when merged; 0 when the shard key does not exist (nothing written).
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
  return 0
end
redis.call('BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
redis.call('DEL', KEYS[2])
return 1

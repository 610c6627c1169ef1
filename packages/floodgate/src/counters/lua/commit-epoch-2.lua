--[[
commit-epoch-2.lua: ends a rebuild by setting the epoch marker, but only if the
rebuild lock still holds the rebuilder's token. If Redis lost its data again
during the rebuild (the lock vanished with it), nothing is set and the next
check starts over.

KEYS[1]  rebuild lock ({<prefix>:epoch}:rebuild; same slot as KEYS[2])
KEYS[2]  epoch marker (<prefix>:epoch)
ARGV[1]  the rebuilder's lock token
ARGV[2]  the new epoch id (random)

Returns: 1 when the epoch was set, 0 when the lock was no longer ours.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[2], ARGV[2])
return 1

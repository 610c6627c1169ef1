--[[
invalidate-2.lua: delete a cached value and move its data version, so a
load that began before this call cannot write its older value afterwards
(fill-4 compares the version).

KEYS[1]  value key          <p>:c:<cache>:{<key>}
KEYS[2]  version key        <p>:c:<cache>:{<key>}:ver
ARGV[1]  version TTL (ms)   ≥ the lock TTL: no fill can come later than that

Returns: the new version (integer).
]]
redis.call('DEL', KEYS[1])
local version = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return version

--[[
set-2.lua: write a value directly (write-through) and move the data version,
so a load that began before this call cannot overwrite it with an older value.

KEYS[1]  value key          <p>:c:<cache>:{<key>}
KEYS[2]  version key        <p>:c:<cache>:{<key>}:ver
ARGV[1]  envelope           bytes to store
ARGV[2]  physical TTL (ms)
ARGV[3]  version TTL (ms)

Returns: the new version (integer).
]]
local version = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return version

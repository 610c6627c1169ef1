--[[
acquire-2.lua: acquires a mutex and issues its fencing token, in one atomic step.

KEYS[1]  lock key: string holding the holder's random token, with a TTL
KEYS[2]  fence key: integer counter, one per lock (same hash tag as KEYS[1])
ARGV[1]  token: the would-be holder's random token (128-bit hex)
ARGV[2]  ttl (ms): lock TTL, integer >= 1
ARGV[3]  fence ttl (ms): 0 = the fence never expires; otherwise it expires this
         long after the last acquire (integer >= ARGV[2]), and the next
         acquire after that restarts the tokens at 1

Returns: the new fencing token (integer, strictly increasing per lock while the
         fence lives) when the lock was free and is now ours; nil when someone
         else holds it (then the fence is left untouched).
]]
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = redis.call('INCR', KEYS[2])
  if tonumber(ARGV[3]) > 0 then
    redis.call('PEXPIRE', KEYS[2], ARGV[3])
  end
  return fence
end
return false

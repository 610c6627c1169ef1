--[[
fill-4.lua: write a loaded value (or the negative sentinel) only if no
invalidation happened since the load began and the loader still holds its
lock; release the lock and wake waiters, all in one step.

KEYS[1]  value key          <p>:c:<cache>:{<key>}
KEYS[2]  version key        <p>:c:<cache>:{<key>}:ver
KEYS[3]  lock key           <p>:c:<cache>:{<key>}:lock
KEYS[4]  waiters flag       <p>:c:<cache>:{<key>}:wait
ARGV[1]  envelope           bytes to store
ARGV[2]  physical TTL (ms)  logical TTL + grace
ARGV[3]  version            the version claim-4 returned when the load began
ARGV[4]  token              the lock token, or '' for a load that took no lock
ARGV[5]  mode               'set': overwrite; 'nx': negative sentinel, written
                            only when the key is absent or already negative
ARGV[6]  channel            wake-up pub/sub channel
ARGV[7]  message            the cache key (what waiters listen for)

Returns:
   1  written
   0  not written: the version moved (an invalidation or set happened)
  -1  not written: the lock is no longer ours (it expired; maybe re-taken)
  -2  not written: mode 'nx' and a real value is there
]]
if ARGV[4] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[4] then
  return -1
end
local result
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[3] then
  result = 0
elseif ARGV[5] == 'nx' then
  local current = redis.call('GET', KEYS[1])
  if current and string.sub(current, 1, 6) ~= 'fg1|n|' then
    result = -2
  else
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    result = 1
  end
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  result = 1
end
if ARGV[4] ~= '' then
  redis.call('DEL', KEYS[3])
end
if redis.call('DEL', KEYS[4]) == 1 then
  redis.call('PUBLISH', ARGV[6], ARGV[7])
end
return result

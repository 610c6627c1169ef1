--[[
abandon-2.lua: a loader failed; give up its lock (compare-and-delete) or,
for a failed stale-while-revalidate refresh, keep the lock as a back-off so
nobody retries the loader before it expires. Wakes waiters either way, so
one of them can claim the load.

KEYS[1]  lock key           <p>:c:<cache>:{<key>}:lock
KEYS[2]  waiters flag       <p>:c:<cache>:{<key>}:wait
ARGV[1]  token              the loader's lock token
ARGV[2]  back-off (ms)      0: delete the lock now; > 0: let it expire in this many ms
ARGV[3]  channel            wake-up pub/sub channel
ARGV[4]  message            the cache key

Returns: 1 if the lock was ours, 0 if not (it expired or another loader has it; untouched).
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if tonumber(ARGV[2]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  redis.call('DEL', KEYS[1])
end
if redis.call('DEL', KEYS[2]) == 1 then
  redis.call('PUBLISH', ARGV[3], ARGV[4])
end
return 1

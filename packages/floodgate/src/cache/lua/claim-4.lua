--[[
claim-4.lua: after an L2 miss (or for a stale-while-revalidate refresh),
try to become the one loader of a cache key, reading the key's data version
in the same step so a later invalidation is detectable at fill time.

KEYS[1]  value key          <p>:c:<cache>:{<key>}
KEYS[2]  version key        <p>:c:<cache>:{<key>}:ver   (integer; absent = 0)
KEYS[3]  lock key           <p>:c:<cache>:{<key>}:lock  (holds the loader's token)
KEYS[4]  waiters flag       <p>:c:<cache>:{<key>}:wait  (set when someone waits)
ARGV[1]  token              random, unique per load attempt
ARGV[2]  lock TTL (ms)
ARGV[3]  mode               'miss': report a value that landed meanwhile;
                            'refresh': the caller holds a stale value, skip that check

Returns: one of
  {0}                  mode 'miss' and the value key exists now (re-read it)
  {1, version}         lock acquired: load, then fill-4 with this version and token
  {2, version, pttl}   another loader holds the lock for pttl more ms; in mode
                       'miss' the waiters flag is set so its fill publishes a wake-up
]]
--- @include "includes/claim-lock"

if ARGV[3] == 'miss' and redis.call('EXISTS', KEYS[1]) == 1 then
  return {0}
end
return claimLock(KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3] == 'miss')

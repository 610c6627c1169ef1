--[[
read-claim-n.lua: the L2 reads of L1 misses, each claiming its key's loader
lock in the same step when the value is absent, so a cold miss waits for one
Redis reply before its load, not two (a GET, then claim-4.lua). The misses of
one poll phase share one call on a single node; on a cluster each call holds
one item (its four keys share the hash tag {<key>}).

KEYS[1] ..  the keys of item 1, then of item 2, and so on, four per item;
ARGV[1] ..  the arguments of item 1, then of item 2, two per item;
for item i (1-based), as in claim-4.lua:
KEYS[4i-3]  value key          <p>:c:<cache>:{<key>}
KEYS[4i-2]  version key        <p>:c:<cache>:{<key>}:ver
KEYS[4i-1]  lock key           <p>:c:<cache>:{<key>}:lock
KEYS[4i]    waiters flag       <p>:c:<cache>:{<key>}:wait
ARGV[2i-1]  token              random, unique per load attempt
ARGV[2i]    lock TTL (ms)

Returns: one reply per item, in order:
  {0, value}           the value key holds value (its bytes; no lock taken)
  {1, version}         lock acquired: load, then fill-4 with this version and token
  {2, version, pttl}   another loader holds the lock for pttl more ms; the waiters
                       flag is set so its fill publishes a wake-up
]]
--- @include "includes/claim-lock"

local replies = {}
for i = 1, #KEYS / 4 do
  local k = 4 * i
  local value = redis.call('GET', KEYS[k - 3])
  if value then
    replies[i] = {0, value}
  else
    replies[i] = claimLock(KEYS[k - 2], KEYS[k - 1], KEYS[k], ARGV[2 * i - 1], ARGV[2 * i], true)
  end
end
return replies

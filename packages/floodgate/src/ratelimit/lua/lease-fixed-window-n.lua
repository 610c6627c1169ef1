--[[
lease-fixed-window-n.lua: fixed window counter, leased mode: settles a batch
of lease calls (one instance's lease on one limiter key each), in order, on
one Redis TIME (a batch: the lease calls of one process's event-loop poll
phase). Each call gives back the unused units of its previous lease, then
reserves a slice of the quota that the instance spends locally, and records
the grant under the call's id, so that a call whose reply was lost can be
cancelled (includes/lease-grants.lua).

Reservation against a shared bound, as in O'Neil's escrow method (1986) and
Doorman's capacity leases: the slice is counted in the window's counter the
moment it is granted, so the window's count (reserved, so admitted or unused)
never passes the limit. Windows as in fixed-window-n.lua: aligned on the Redis
clock, the counter expires at its window's end (PEXPIREAT), a counter naming
another window counts as empty, one that lost its TTL is re-armed.

Slice = min(free, max(cost, ceil(free x fraction))), free = limit - count: a
fixed share of what is still unleased, so slices shrink as the quota runs out
and instances cannot strand much of a nearly spent quota.

A given-back count goes to the counter only if `giveBackIndex` is the current
window and the counter still names it, never below 0; a lease of an earlier
window has expired with it. A cancel (`cancelId`, with cost 0) gives back the
units its grant recorded in this window, once; before its grant, it makes the
grant refuse.

KEYS[1] ..  the keys of call 1, then of call 2, and so on; call i's:
KEYS[2i-1]  call i's counter of units reserved in the current window (string integer)
KEYS[2i]    call i's grants of the current window (hash: grant id -> units, or "x")
ARGV[1]     limit: units admitted per window (integer >= 1)
ARGV[2]     windowMs: window length (ms, integer >= 1)
ARGV[3]     fraction: share of the free quota one slice takes (0 < fraction <= 1)
ARGV[5i-1]  call i's cost: units the request needs now (integer >= 0; 0 = give back only)
ARGV[5i]    call i's giveBack: unused units of the previous lease (integer >= 0)
ARGV[5i+1]  call i's giveBackIndex: window index of that lease (integer; -1 = none)
ARGV[5i+2]  call i's grantId: id recorded with this call's slice ("" = none)
ARGV[5i+3]  call i's cancelId: id of an earlier call to cancel ("" = none; cost and giveBack 0)

Returns a flat array of integers: [1] nowMs, the Redis TIME of every call (ms
since epoch), [2] windowIndex, floor(nowMs / windowMs): a slice is valid in
this window only; then 5 per call, call i at 5i-2 .. 5i+2:
  granted: 1 a slice was reserved (or cost 0), 0 rejected (nothing reserved)
  slice: units reserved for this instance (>= cost when granted)
  free: limit - count after the call: quota nobody holds
  resetAtMs: end of the current window (ms since epoch, Redis clock)
  retryAfterMs: 0 if granted; ms until this cost fits; -1 if cost > limit
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/fixed-window-count"
--- @include "includes/lease-grants"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local fraction = tonumber(ARGV[3])
local now = redisNowMs()
local index = math.floor(now / window)

local function settle(counterKey, grantsKey, cost, giveBack, giveBackIndex, grantId, cancelId)
  local count, windowEnd, expiresAt = fixedWindowCount(counterKey, window, now)
  if expiresAt == -1 then
    redis.call('PEXPIREAT', counterKey, windowEnd)
    expiresAt = windowEnd
  end
  if cancelId ~= '' then
    giveBack, giveBackIndex = cancelLeaseGrant(cancelId, { { grantsKey, windowEnd, index } })
  end
  if giveBack > 0 and giveBackIndex == index and expiresAt == windowEnd and count > 0 then
    count = redis.call('DECRBY', counterKey, math.min(giveBack, count))
  end

  local free = math.max(0, limit - count)
  if cost == 0 then return 1, 0, free, windowEnd, 0 end
  if cost > limit then return 0, 0, free, windowEnd, -1 end
  if cost > free then return 0, 0, free, windowEnd, windowEnd - now end
  local slice = math.min(free, math.max(cost, math.ceil(free * fraction - 1e-9)))
  if grantId ~= '' and not claimLeaseGrant(grantsKey, windowEnd, grantId, slice) then
    return 0, 0, free, windowEnd, 0
  end
  if expiresAt == windowEnd then
    redis.call('INCRBY', counterKey, slice)
  else
    redis.call('SET', counterKey, slice, 'PXAT', windowEnd)
  end
  return 1, slice, free - slice, windowEnd, 0
end

local reply = { now, index }
for i = 1, #KEYS / 2 do
  local a = 5 * i - 2
  reply[a], reply[a + 1], reply[a + 2], reply[a + 3], reply[a + 4] = settle(
    KEYS[2 * i - 1],
    KEYS[2 * i],
    tonumber(ARGV[a + 1]),
    tonumber(ARGV[a + 2]),
    tonumber(ARGV[a + 3]),
    ARGV[a + 4],
    ARGV[a + 5]
  )
end
return reply

--[[
lease-fixed-window-2.lua: fixed window counter, leased mode: settles one
instance's lease on a limiter key. Gives back the unused units of its previous
lease, then reserves a slice of the quota that the instance spends locally.
Records the grant under the call's id, so that a call whose reply was lost can
be cancelled (includes/lease-grants.lua).

Reservation against a shared bound, as in O'Neil's escrow method (1986) and
Doorman's capacity leases: the slice is counted in the window's counter the
moment it is granted, so the window's count (reserved, so admitted or unused)
never passes the limit. Windows as in fixed-window-1.lua: aligned on the Redis
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

KEYS[1]  counter of units reserved in the current window (string integer)
KEYS[2]  the current window's grants (hash: grant id -> units, or "x")
ARGV[1]  limit: units admitted per window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)
ARGV[3]  cost: units the request needs now (integer >= 0; 0 = give back only)
ARGV[4]  fraction: share of the free quota one slice takes (0 < fraction <= 1)
ARGV[5]  giveBack: unused units of the previous lease (integer >= 0)
ARGV[6]  giveBackIndex: window index of that lease (integer; -1 = none)
ARGV[7]  grantId: id recorded with this call's slice ("" = none)
ARGV[8]  cancelId: id of an earlier call to cancel ("" = none; cost and giveBack 0)

Returns an array of integers:
  [1] granted: 1 a slice was reserved (or cost 0), 0 rejected (nothing reserved)
  [2] slice: units reserved for this instance (>= cost when granted)
  [3] free: limit - count after the decision: quota nobody holds
  [4] resetAtMs: end of the current window (ms since epoch, Redis clock)
  [5] retryAfterMs: 0 if granted; ms until this cost fits; -1 if cost > limit
  [6] nowMs: the Redis TIME of the decision (ms since epoch)
  [7] windowIndex: floor(nowMs / windowMs); the slice is valid in this window only
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/fixed-window-count"
--- @include "includes/lease-grants"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local fraction = tonumber(ARGV[4])
local giveBack = tonumber(ARGV[5])
local giveBackIndex = tonumber(ARGV[6])
local grantId = ARGV[7]
local cancelId = ARGV[8]
local now = redisNowMs()
local index = math.floor(now / window)
local count, windowEnd, expiresAt = fixedWindowCount(KEYS[1], window, now)
if expiresAt == -1 then
  redis.call('PEXPIREAT', KEYS[1], windowEnd)
  expiresAt = windowEnd
end
if cancelId ~= '' then
  giveBack, giveBackIndex = cancelLeaseGrant(cancelId, { { KEYS[2], windowEnd, index } })
end
if giveBack > 0 and giveBackIndex == index and expiresAt == windowEnd and count > 0 then
  count = redis.call('DECRBY', KEYS[1], math.min(giveBack, count))
end

local free = math.max(0, limit - count)
if cost == 0 then
  return { 1, 0, free, windowEnd, 0, now, index }
end
if cost > limit then
  return { 0, 0, free, windowEnd, -1, now, index }
end
if cost > free then
  return { 0, 0, free, windowEnd, windowEnd - now, now, index }
end
if grantId ~= '' and leaseGrantCancelled(KEYS[2], windowEnd, grantId) then
  return { 0, 0, free, windowEnd, 0, now, index }
end

local slice = math.min(free, math.max(cost, math.ceil(free * fraction - 1e-9)))
if expiresAt == windowEnd then
  redis.call('INCRBY', KEYS[1], slice)
else
  redis.call('SET', KEYS[1], slice, 'PXAT', windowEnd)
end
if grantId ~= '' then recordLeaseGrant(KEYS[2], windowEnd, grantId, slice) end
return { 1, slice, free - slice, windowEnd, 0, now, index }

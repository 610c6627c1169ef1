--[[
lease-sliding-window-n.lua: sliding window counter, leased mode: settles a
batch of lease calls (one instance's lease on one limiter key each), in
order, on one Redis TIME (a batch: the lease calls of one process's
event-loop poll phase). Each call gives back the unused units of its
previous lease, then reserves a slice of the quota that the instance spends
locally, and records the grant under the call's id, so that a call whose
reply was lost can be cancelled (includes/lease-grants.lua).

Reservation against a shared bound, as in O'Neil's escrow method (1986) and
Doorman's capacity leases: the slice is counted in the current window's
counter the moment it is granted, so every unit an instance admits from it was
already checked against the limit here, and the window's count (reserved, so
admitted or unused) never passes the limit. Same estimate as
sliding-window-n.lua (Cloudflare 2017): previous window's count x remaining
overlap + current count; a slice is granted iff estimate + cost <= limit.

Slice = min(free, max(cost, ceil(free x fraction))), free = floor(limit -
estimate): a fixed share of what is still unleased, so slices shrink as the
quota runs out and instances cannot strand much of a nearly spent quota.

A given-back count goes to the counter of window `giveBackIndex` if that is
the current or the previous window and the counter still names it (its
PEXPIRETIME), never below 0; anything else has expired with its window. A
cancel (`cancelId`, with cost 0) gives back the units its grant recorded in the
current or the previous window, once; before its grant, it makes the grant
refuse.

KEYS[1] ..  the keys of call 1, then of call 2, and so on; call i's:
KEYS[4i-3]  call i's counter of the windows with an even index (floor(ms / windowMs))
KEYS[4i-2]  call i's counter of the windows with an odd index
KEYS[4i-1]  call i's grants of the windows with an even index (hash: grant id -> units, or "x")
KEYS[4i]    call i's grants of the windows with an odd index
ARGV[1]     limit: units per window (integer >= 1)
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
  free: floor(limit - estimate) after the call: quota nobody holds
  resetAtMs: when the estimate is back to 0 (ms since epoch)
  retryAfterMs: 0 if granted; ms until this cost fits; -1 if cost > limit
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/sliding-window-decide"
--- @include "includes/lease-grants"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local fraction = tonumber(ARGV[3])
local now = redisNowMs()
local index = math.floor(now / window)
local start = index * window

-- `keys`: the offset of the call's first key (its counters, then its grants, by window parity)
local function settle(keys, cost, giveBack, giveBackIndex, grantId, cancelId)
  local curKey = KEYS[keys + index % 2]
  local prevKey = KEYS[keys + (index + 1) % 2]
  -- a window's grants expire with its counter: start + 2 x window
  local curGrants = KEYS[keys + 2 + index % 2]
  local prevGrants = KEYS[keys + 2 + (index + 1) % 2]

  if cancelId ~= '' then
    giveBack, giveBackIndex = cancelLeaseGrant(cancelId, {
      { curGrants, start + 2 * window, index },
      { prevGrants, start + window, index - 1 },
    })
  end

  if giveBack > 0 and (giveBackIndex == index or giveBackIndex == index - 1) then
    local key = KEYS[keys + giveBackIndex % 2]
    if redis.call('PEXPIRETIME', key) == giveBackIndex * window + 2 * window then
      local held = tonumber(redis.call('GET', key) or '0')
      if held > 0 then redis.call('DECRBY', key, math.min(giveBack, held)) end
    end
  end

  local cur, curExpiry = slidingWindowRead(curKey, start + 2 * window)
  local prev = slidingWindowRead(prevKey, start + window)
  local estimate = prev * (window - (now - start)) / window + cur
  local free = math.max(0, math.floor(limit - estimate + 1e-9))

  if cost == 0 then return 1, 0, free, slidingWindowResetAt(cur, prev, start, window, now), 0 end
  if cost > limit then return 0, 0, free, slidingWindowResetAt(cur, prev, start, window, now), -1 end
  if cost > free then
    local retryAfter = slidingWindowRetryAfter(cur, prev, cost, limit, start, window, now)
    return 0, 0, free, slidingWindowResetAt(cur, prev, start, window, now), retryAfter
  end
  local slice = math.min(free, math.max(cost, math.ceil(free * fraction - 1e-9)))
  if grantId ~= '' and not claimLeaseGrant(curGrants, start + 2 * window, grantId, slice) then
    return 0, 0, free, slidingWindowResetAt(cur, prev, start, window, now), 0
  end
  cur = slidingWindowAdd(curKey, curExpiry, slice, start + 2 * window)
  return 1, slice, free - slice, slidingWindowResetAt(cur, prev, start, window, now), 0
end

local reply = { now, index }
for i = 1, #KEYS / 4 do
  local a = 5 * i - 2
  reply[a], reply[a + 1], reply[a + 2], reply[a + 3], reply[a + 4] = settle(
    4 * i - 3,
    tonumber(ARGV[a + 1]),
    tonumber(ARGV[a + 2]),
    tonumber(ARGV[a + 3]),
    ARGV[a + 4],
    ARGV[a + 5]
  )
end
return reply

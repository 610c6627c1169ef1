--[[
fixed-window-n.lua: fixed window counter, a batch of decisions (one limiter
key each), in order, on one Redis TIME: a batch holds the decisions one
process asked for during one event-loop poll phase, so one call, one write and
one reply serve them all. Two decisions of one key in a batch count each
other's units exactly as two calls in a row would.

Windows are aligned to multiples of windowMs on the Redis clock (TIME). The
counter key expires exactly at the end of its window (PEXPIREAT), so its
PEXPIRETIME names the window it counts: a key whose expiry is not this
window's end is stale and counts as empty; a key that lost its TTL is
re-armed (PEXPIREAT) and keeps its count (never lives forever).

KEYS[1] ..  the keys of decision 1, then of decision 2, and so on; decision i's:
KEYS[i]    decision i's counter: units admitted in the current window (string integer)
ARGV[1]    limit: units admitted per window (integer >= 1)
ARGV[2]    windowMs: window length (ms, integer >= 1)
ARGV[2+i]  decision i's cost: units the request takes (integer >= 1)

Returns: a flat array of integers: [1] nowMs, the Redis TIME of every decision
(ms since epoch), then 4 per decision, decision i at 4i-2 .. 4i+1:
  allowed: 1 admitted (cost consumed), 0 rejected (nothing consumed)
  remaining: units left in this window after the decision
  resetAtMs: end of the current window (ms since epoch, Redis clock)
  retryAfterMs: 0 if admitted; ms until this cost fits; -1 if cost > limit
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/fixed-window-count"
--- @include "includes/decide-each"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = redisNowMs()

local function decide(k, cost)
  local key = KEYS[k]
  local count, windowEnd, expiresAt = fixedWindowCount(key, window, now)
  if expiresAt == -1 then
    redis.call('PEXPIREAT', key, windowEnd)
    expiresAt = windowEnd
  end
  local left = math.max(0, limit - count)
  if cost > limit then return 0, left, windowEnd, -1 end
  if count + cost > limit then return 0, left, windowEnd, windowEnd - now end
  if expiresAt == windowEnd then
    count = redis.call('INCRBY', key, cost)
  else
    count = cost
    redis.call('SET', key, cost, 'PXAT', windowEnd)
  end
  return 1, limit - count, windowEnd, 0
end

return decideEach(KEYS, ARGV, 1, 3, now, decide)

--[[
sliding-window-n.lua: sliding window counter, a batch of decisions (one
limiter key each), in order, on one Redis TIME (a batch: the decisions of one
process's event-loop poll phase; two decisions of one key count each other's
units as two calls in a row would).

Estimate = previous window's count x (share of the trailing window that
still overlaps it) + current window's count; admit if estimate + cost <=
limit. Source: Cloudflare, "How we built rate limiting capable of scaling
to millions of domains" (2017). Windows are aligned to multiples of windowMs
on the Redis clock; the two counters alternate by window parity and share
the limiter key's hash tag. A counter expires (PEXPIREAT) when it stops
being "previous", so its PEXPIRETIME names its window; a counter with
another expiry is stale (counts 0); one that lost its TTL is re-armed.

Bound (any trailing window ending e ms into aligned window [s, s + W)):
admitted <= limit + previous x e / W < 2 x limit; the estimate is exact
when the previous window's traffic was uniform.

KEYS[1] ..  the keys of decision 1, then of decision 2, and so on; decision i's:
KEYS[2i-1]  decision i's counter of the windows with an even index (floor(ms / windowMs))
KEYS[2i]    decision i's counter of the windows with an odd index
ARGV[1]     limit: units per window (integer >= 1)
ARGV[2]     windowMs: window length (ms, integer >= 1)
ARGV[2+i]   decision i's cost: units the request takes (integer >= 1)

Returns: a flat array of integers: [1] nowMs, the Redis TIME of every decision
(ms since epoch), then 4 per decision, decision i at 4i-2 .. 4i+1:
  allowed: 1 admitted (cost consumed), 0 rejected (nothing consumed)
  remaining: floor(limit - estimate) after the decision
  resetAtMs: when the estimate is back to 0 (ms since epoch)
  retryAfterMs: 0 if admitted; ms until this cost fits; -1 if cost > limit
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/sliding-window-decide"
--- @include "includes/decide-each"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = redisNowMs()
local index = math.floor(now / window)
local start = index * window
-- offsets of the current and the previous window's counter among a decision's two keys
local cur = index % 2
local prev = (index + 1) % 2

local function decide(k, cost)
  local curKey = KEYS[k + cur]
  local prevKey = KEYS[k + prev]
  local current, curExpiry = slidingWindowRead(curKey, start + 2 * window)
  local previous = slidingWindowRead(prevKey, start + window)
  local estimate = previous * (window - (now - start)) / window + current
  local left = math.max(0, math.floor(limit - estimate + 1e-9))
  if cost > limit then
    return 0, left, slidingWindowResetAt(current, previous, start, window, now), -1
  end
  if estimate + cost > limit + 1e-9 then
    local retryAfter = slidingWindowRetryAfter(current, previous, cost, limit, start, window, now)
    return 0, left, slidingWindowResetAt(current, previous, start, window, now), retryAfter
  end
  current = slidingWindowAdd(curKey, curExpiry, cost, start + 2 * window)
  local remaining = math.max(0, math.floor(limit - estimate - cost + 1e-9))
  return 1, remaining, slidingWindowResetAt(current, previous, start, window, now), 0
end

return decideEach(KEYS, ARGV, 2, 3, now, decide)

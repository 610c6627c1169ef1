--[[
sliding-window-2.lua: sliding window counter, one decision.

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

KEYS[1]  counter of the windows with an even index (floor(ms / windowMs))
KEYS[2]  counter of the windows with an odd index
ARGV[1]  limit: units per window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)
ARGV[3]  cost: units this request takes (integer >= 1)

Returns: an array of integers:
  [1] allowed: 1 admitted (cost consumed), 0 rejected (nothing consumed)
  [2] remaining: floor(limit - estimate) after the decision
  [3] resetAtMs: when the estimate is back to 0 (ms since epoch)
  [4] retryAfterMs: 0 if admitted; ms until this cost fits; -1 if cost > limit
  [5] nowMs: the Redis TIME used for the decision (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/sliding-window-decide"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = redisNowMs()
local index = math.floor(now / window)
local start = index * window
local curKey = KEYS[1 + index % 2]
local prevKey = KEYS[1 + (index + 1) % 2]

local cur, curExpiry = slidingWindowRead(curKey, start + 2 * window)
local prev = slidingWindowRead(prevKey, start + window)
local estimate = prev * (window - (now - start)) / window + cur

local function resetAt(current)
  return slidingWindowResetAt(current, prev, start, window, now)
end

local left = math.max(0, math.floor(limit - estimate + 1e-9))
if cost > limit then
  return { 0, left, resetAt(cur), -1, now }
end
if estimate + cost > limit + 1e-9 then
  local retryAfter = slidingWindowRetryAfter(cur, prev, cost, limit, start, window, now)
  return { 0, left, resetAt(cur), retryAfter, now }
end

cur = slidingWindowAdd(curKey, curExpiry, cost, start + 2 * window)
local remaining = math.max(0, math.floor(limit - estimate - cost + 1e-9))
return { 1, remaining, resetAt(cur), 0, now }

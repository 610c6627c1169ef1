--[[
fixed-window-1.lua: fixed window counter, one decision.

Windows are aligned to multiples of windowMs on the Redis clock (TIME). The
counter key expires exactly at the end of its window (PEXPIREAT), so its
PEXPIRETIME names the window it counts: a key whose expiry is not this
window's end is stale and counts as empty; a key that lost its TTL is
re-armed (PEXPIREAT) and keeps its count (never lives forever).

KEYS[1]  counter of units admitted in the current window (string integer)
ARGV[1]  limit: units admitted per window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)
ARGV[3]  cost: units this request takes (integer >= 1)

Returns: an array of integers:
  [1] allowed: 1 admitted (cost consumed), 0 rejected (nothing consumed)
  [2] remaining: units left in this window after the decision
  [3] resetAtMs: end of the current window (ms since epoch, Redis clock)
  [4] retryAfterMs: 0 if admitted; ms until this cost fits; -1 if cost > limit
  [5] nowMs: the Redis TIME used for the decision (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/fixed-window-count"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = redisNowMs()
local count, windowEnd, expiresAt = fixedWindowCount(KEYS[1], window, now)
if expiresAt == -1 then
  redis.call('PEXPIREAT', KEYS[1], windowEnd)
  expiresAt = windowEnd
end

local left = math.max(0, limit - count)
if cost > limit then
  return { 0, left, windowEnd, -1, now }
end
if count + cost > limit then
  return { 0, left, windowEnd, windowEnd - now, now }
end

if expiresAt == windowEnd then
  count = redis.call('INCRBY', KEYS[1], cost)
else
  count = cost
  redis.call('SET', KEYS[1], cost, 'PXAT', windowEnd)
end
return { 1, limit - count, windowEnd, 0, now }

--[[
peek-fixed-window-1.lua: fixed window counter, read only (no unit consumed,
nothing written). Same window rule as fixed-window-n.lua: a counter whose
expiry is not this window's end is stale and counts as empty.

KEYS[1]  counter of units admitted in the current window (string integer)
ARGV[1]  limit: units admitted per window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)

Returns: an array of integers:
  [1] remaining: units a request could take now
  [2] resetAtMs: end of the current window (ms since epoch, Redis clock)
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/fixed-window-count"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = redisNowMs()
local count, windowEnd = fixedWindowCount(KEYS[1], window, now)
return { math.max(0, limit - count), windowEnd, now }

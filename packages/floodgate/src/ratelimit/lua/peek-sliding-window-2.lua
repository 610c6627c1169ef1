--[[
peek-sliding-window-2.lua: sliding window counter (Cloudflare 2017), read only
(no unit consumed, nothing written). Same estimate as sliding-window-n.lua:
previous window's count weighted by its remaining overlap, plus the current.

KEYS[1]  counter of even-numbered windows (string integer)
KEYS[2]  counter of odd-numbered windows (string integer)
ARGV[1]  limit: units admitted per window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)

Returns: an array of integers:
  [1] remaining: whole units a request could take now
  [2] resetAtMs: when both windows are empty again (ms since epoch), now if already
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/sliding-window-count"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = redisNowMs()
local index = math.floor(now / window)
local start = index * window

local cur = slidingWindowCount(KEYS[1 + index % 2], start + 2 * window)
local prev = slidingWindowCount(KEYS[1 + (index + 1) % 2], start + window)
local estimate = prev * (window - (now - start)) / window + cur
local resetAt = slidingWindowResetAt(cur, prev, start, window, now)
return { math.max(0, math.floor(limit - estimate + 1e-9)), resetAt, now }

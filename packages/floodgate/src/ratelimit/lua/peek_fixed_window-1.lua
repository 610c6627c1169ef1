--[[
peek_fixed_window-1.lua: fixed window counter, read only (no unit consumed,
nothing written). Same window rule as fixed_window-1.lua: a counter whose
expiry is not this window's end is stale and counts as empty.

KEYS[1]  counter of units admitted in the current window (string integer)
ARGV[1]  limit: units admitted per window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)

Returns an array of integers:
  [1] remaining: units a request could take now
  [2] resetAtMs: end of the current window (ms since epoch, Redis clock)
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local windowEnd = now - (now % window) + window

local expiresAt = redis.call('PEXPIRETIME', KEYS[1])
local count = 0
if expiresAt == windowEnd or expiresAt == -1 then
  count = tonumber(redis.call('GET', KEYS[1]) or '0')
end
return { math.max(0, limit - count), windowEnd, now }

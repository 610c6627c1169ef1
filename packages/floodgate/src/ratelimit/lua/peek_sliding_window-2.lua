--[[
peek_sliding_window-2.lua: sliding window counter (Cloudflare 2017), read only
(no unit consumed, nothing written). Same estimate as sliding_window-2.lua:
previous window's count weighted by its remaining overlap, plus the current.

KEYS[1]  counter of even-numbered windows (string integer)
KEYS[2]  counter of odd-numbered windows (string integer)
ARGV[1]  limit: units admitted per window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)

Returns an array of integers:
  [1] remaining: whole units a request could take now
  [2] resetAtMs: when both windows are empty again (ms since epoch), now if already
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local index = math.floor(now / window)
local start = index * window

local function read(key, expectedExpiry)
  local expiresAt = redis.call('PEXPIRETIME', key)
  if expiresAt == -1 or expiresAt == expectedExpiry then
    return tonumber(redis.call('GET', key) or '0')
  end
  return 0
end

local cur = read(KEYS[1 + index % 2], start + 2 * window)
local prev = read(KEYS[1 + (index + 1) % 2], start + window)
local estimate = prev * (window - (now - start)) / window + cur
local resetAt = now
if cur > 0 then
  resetAt = start + 2 * window
elseif prev > 0 then
  resetAt = start + window
end
return { math.max(0, math.floor(limit - estimate + 1e-9)), resetAt, now }

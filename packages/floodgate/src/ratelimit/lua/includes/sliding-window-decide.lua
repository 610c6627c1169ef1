--[[
sliding-window-decide.lua (include): the pieces shared by the sliding window
decision and its leased twin (the scripts that write).
slidingWindowRead(key, expectedExpiry) is slidingWindowCount that re-arms a
counter which lost its TTL (PEXPIREAT expectedExpiry, so it never lives
forever); returns count and the counter's expiry (ms since epoch).
slidingWindowRetryAfter(cur, prev, cost, limit, start, window, now) is the ms
(>= 1) until a refused cost <= limit fits.
slidingWindowAdd(key, expiresAt, units, windowExpiry) counts `units` in the
current window's counter (`expiresAt`: its PEXPIRETIME as read; a counter not
naming this window, expiring at `windowExpiry`, starts over); returns the new count.
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]
--- @include "sliding-window-count"
local function slidingWindowRead(key, expectedExpiry)
  local count, expiresAt = slidingWindowCount(key, expectedExpiry)
  if expiresAt == -1 then
    redis.call('PEXPIREAT', key, expectedExpiry)
    return count, expectedExpiry
  end
  return count, expiresAt
end

local function slidingWindowAdd(key, expiresAt, units, windowExpiry)
  if expiresAt == windowExpiry then return redis.call('INCRBY', key, units) end
  redis.call('SET', key, units, 'PXAT', windowExpiry)
  return units
end

local function slidingWindowRetryAfter(cur, prev, cost, limit, start, window, now)
  local retryAfter
  if cur + cost <= limit and prev > 0 then
    -- wait for the previous window's weight to fall enough
    retryAfter = math.ceil(window - (limit - cur - cost) * window / prev - (now - start))
  else
    -- wait for the next window, where this window becomes "previous"
    retryAfter = start + window - now
    if cur > 0 then
      retryAfter = retryAfter + math.max(0, math.ceil(window - (limit - cost) * window / cur))
    end
  end
  return math.max(1, retryAfter)
end

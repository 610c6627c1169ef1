--[[
sliding-window-count.lua (include): the reads shared by the sliding window
decision and peek.
slidingWindowCount(key, expectedExpiry) returns a window counter's count and
its PEXPIRETIME: a counter whose expiry is not `expectedExpiry` is stale and
counts 0; one that lost its TTL (-1) keeps its count.
slidingWindowResetAt(current, previous, start, window, now) is when the
estimate is back to 0 (ms since epoch), `now` when it already is.
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]
local function slidingWindowCount(key, expectedExpiry)
  local expiresAt = redis.call('PEXPIRETIME', key)
  if expiresAt == -1 or expiresAt == expectedExpiry then
    return tonumber(redis.call('GET', key) or '0'), expiresAt
  end
  return 0, expiresAt
end

local function slidingWindowResetAt(current, previous, start, window, now)
  if current > 0 then return start + 2 * window end
  if previous > 0 then return start + window end
  return now
end

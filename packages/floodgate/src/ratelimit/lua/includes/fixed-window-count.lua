--[[
fixed-window-count.lua (include): fixedWindowCount(key, window, now) reads a
fixed window counter at `now` (ms). Returns count, windowEnd (ms since epoch),
expiresAt (the key's PEXPIRETIME). A counter whose expiry is not this window's
end is stale and counts 0; one that lost its TTL (-1) keeps its count.
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]
local function fixedWindowCount(key, window, now)
  local windowEnd = now - (now % window) + window
  local expiresAt = redis.call('PEXPIRETIME', key)
  local count = 0
  if expiresAt == windowEnd or expiresAt == -1 then
    count = tonumber(redis.call('GET', key) or '0')
  end
  return count, windowEnd, expiresAt
end

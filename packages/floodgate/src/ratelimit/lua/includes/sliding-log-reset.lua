--[[
sliding-log-reset.lua (include): slidingLogResetAt(key, window, now), when
every logged unit has left the window: newest entry + window (ms since epoch),
`now` when the log is empty.
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]
local function slidingLogResetAt(key, window, now)
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if newest[2] then
    return tonumber(newest[2]) + window
  end
  return now
end

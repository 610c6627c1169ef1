--[[
gcra-state.lua (include): the GCRA state read by the decision and the peek.
gcraTat(key, now) returns the theoretical arrival time (ms, at least now; a
missing key is full capacity) and the stored value (false when missing).
gcraRemaining(tat, now, tau, interval) is the whole units admissible at `now`.
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]
local function gcraTat(key, now)
  local stored = redis.call('GET', key)
  local tat = now
  if stored then
    tat = math.max(tonumber(stored), now)
  end
  return tat, stored
end

local function gcraRemaining(tat, now, tau, interval)
  return math.max(0, math.floor((tau - (tat - now)) / interval + 1e-9))
end

--[[
gcra-1.lua: generic cell rate algorithm (GCRA), one decision.

Source: Brandur Leach, "Rate Limiting, Cells, and GCRA" (2015), as in
throttled and redis-cell. The key holds the theoretical arrival time (TAT).
Emission interval T = windowMs / limit; tolerance tau = burst x T.
newTAT = max(TAT, now) + cost x T; admit iff newTAT - now <= tau, i.e. now >=
newTAT - tau. A rejected request leaves the TAT unchanged. The key expires
(PX) when the TAT is reached (a missing key = full capacity). Admitted units
over any interval of d ms: at most burst + limit x d / windowMs.

KEYS[1]  theoretical arrival time (ms since epoch, decimal string)
ARGV[1]  limit: units per window, the sustained rate (integer >= 1)
ARGV[2]  windowMs: window (ms, integer >= 1)
ARGV[3]  cost: units this request takes (integer >= 1)
ARGV[4]  burst: units admitted at once from idle (integer >= 1)

Returns: an array of integers:
  [1] allowed: 1 admitted (TAT advanced), 0 rejected (TAT unchanged)
  [2] remaining: whole units admissible right now after the decision
  [3] resetAtMs: when the TAT is reached, full capacity again (ms since epoch)
  [4] retryAfterMs: 0 if admitted; ms until this cost fits; -1 if cost > burst
  [5] nowMs: the Redis TIME used for the decision (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/gcra-state"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local now = redisNowMs()
local interval = window / limit
local tau = burst * interval

local tat, stored = gcraTat(KEYS[1], now)

local function remainingAt(level)
  return gcraRemaining(level, now, tau, interval)
end

if cost > burst then
  return { 0, remainingAt(tat), math.ceil(tat), -1, now }
end
local newTat = tat + cost * interval
local allowAt = newTat - tau
if now < allowAt - 1e-9 then
  if stored and redis.call('PTTL', KEYS[1]) == -1 then
    redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(tat - now)))
  end
  return { 0, remainingAt(tat), math.ceil(tat), math.max(1, math.ceil(allowAt - now)), now }
end

-- a Lua number argument is written in its shortest round-trip form (exact, no string.format)
redis.call('SET', KEYS[1], newTat, 'PX', math.max(1, math.ceil(newTat - now)))
return { 1, remainingAt(newTat), math.ceil(newTat), 0, now }

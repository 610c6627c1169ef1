--[[
gcra-n.lua: generic cell rate algorithm (GCRA), a batch of decisions (one
limiter key each), in order, on one Redis TIME (a batch: the decisions of one
process's event-loop poll phase; two decisions of one key see each other as
two calls in a row would).

Source: Brandur Leach, "Rate Limiting, Cells, and GCRA" (2015), as in
throttled and redis-cell. The key holds the theoretical arrival time (TAT).
Emission interval T = windowMs / limit; tolerance tau = burst x T.
newTAT = max(TAT, now) + cost x T; admit iff newTAT - now <= tau, i.e. now >=
newTAT - tau. A rejected request leaves the TAT unchanged. The key expires
(PX) when the TAT is reached (a missing key = full capacity). Admitted units
over any interval of d ms: at most burst + limit x d / windowMs.

KEYS[1] ..  the keys of decision 1, then of decision 2, and so on; decision i's:
KEYS[i]    decision i's theoretical arrival time (ms since epoch, decimal string)
ARGV[1]    limit: units per window, the sustained rate (integer >= 1)
ARGV[2]    windowMs: window (ms, integer >= 1)
ARGV[3]    burst: units admitted at once from idle (integer >= 1)
ARGV[3+i]  decision i's cost: units the request takes (integer >= 1)

Returns: a flat array of integers: [1] nowMs, the Redis TIME of every decision
(ms since epoch), then 4 per decision, decision i at 4i-2 .. 4i+1:
  allowed: 1 admitted (TAT advanced), 0 rejected (TAT unchanged)
  remaining: whole units admissible right now after the decision
  resetAtMs: when the TAT is reached, full capacity again (ms since epoch)
  retryAfterMs: 0 if admitted; ms until this cost fits; -1 if cost > burst
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/gcra-state"
--- @include "includes/decide-each"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now = redisNowMs()
local interval = window / limit
local tau = burst * interval

local function decide(k, cost)
  local key = KEYS[k]
  local tat, stored = gcraTat(key, now)
  if cost > burst then
    return 0, gcraRemaining(tat, now, tau, interval), math.ceil(tat), -1
  end
  local newTat = tat + cost * interval
  local allowAt = newTat - tau
  if now < allowAt - 1e-9 then
    if stored and redis.call('PTTL', key) == -1 then
      redis.call('PEXPIRE', key, math.max(1, math.ceil(tat - now)))
    end
    return 0, gcraRemaining(tat, now, tau, interval), math.ceil(tat), math.max(1, math.ceil(allowAt - now))
  end
  -- a Lua number argument is written in its shortest round-trip form (exact, no string.format)
  redis.call('SET', key, newTat, 'PX', math.max(1, math.ceil(newTat - now)))
  return 1, gcraRemaining(newTat, now, tau, interval), math.ceil(newTat), 0
end

return decideEach(KEYS, ARGV, 1, 4, now, decide)

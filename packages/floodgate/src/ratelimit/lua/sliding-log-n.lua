--[[
sliding-log-n.lua: sliding log, a batch of decisions (one limiter key each),
in order, on one Redis TIME (a batch: the decisions of one process's
event-loop poll phase; two decisions of one key count each other's units as
two calls in a row would). Exact: at most `limit` units in any trailing
windowMs (Redis clock).

The log is a ZSET scored by admission time (ms); each admitted unit adds one
unique member "<nowMs>-<n>", never a bare timestamp, so two units in the
same millisecond both count. n starts after the current count and ZADD NX
proves each member new (a taken one, e.g. after the Redis clock stepped
back, or by a decision of the same key earlier in the batch, is skipped for
the next n), so no sequence key is needed. Rejected requests are not
recorded. Members with score <= now - windowMs have left the window and are
removed first.

KEYS[1] ..  the keys of decision 1, then of decision 2, and so on; decision i's:
KEYS[i]    decision i's log: ZSET member "<ms>-<n>", score = admission time (ms since epoch)
ARGV[1]    limit: units admitted per trailing window (integer >= 1)
ARGV[2]    windowMs: window length (ms, integer >= 1)
ARGV[2+i]  decision i's cost: units the request takes (integer >= 1)

Returns: a flat array of integers: [1] nowMs, the Redis TIME of every decision
(ms since epoch), then 4 per decision, decision i at 4i-2 .. 4i+1:
  allowed: 1 admitted (cost consumed), 0 rejected (nothing recorded)
  remaining: units left in the trailing window after the decision
  resetAtMs: when every logged unit has left the window (ms since epoch)
  retryAfterMs: 0 if admitted; ms until this cost fits; -1 if cost > limit
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/sliding-log-reset"
--- @include "includes/decide-each"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = redisNowMs()

local function decide(k, cost)
  local key = KEYS[k]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)

  if cost > limit or count + cost > limit then
    if count > 0 and redis.call('PTTL', key) == -1 then
      redis.call('PEXPIRE', key, window)
    end
    local resetAt = slidingLogResetAt(key, window, now)
    local left = math.max(0, limit - count)
    if cost > limit then return 0, left, resetAt, -1 end
    -- the (count + cost - limit)-th oldest unit must leave before this cost fits
    local index = count + cost - limit - 1
    local entry = redis.call('ZRANGE', key, index, index, 'WITHSCORES')
    return 0, left, resetAt, math.max(1, tonumber(entry[2]) + window - now)
  end

  local n = count
  if cost == 1 then
    repeat
      n = n + 1
    until redis.call('ZADD', key, 'NX', now, now .. '-' .. n) == 1
  else
    local added = 0
    while added < cost do
      local batch = {}
      for i = 1, math.min(cost - added, 500) do
        n = n + 1
        batch[2 * i - 1] = now
        batch[2 * i] = now .. '-' .. n
      end
      added = added + redis.call('ZADD', key, 'NX', unpack(batch))
    end
  end
  redis.call('PEXPIRE', key, window)
  return 1, limit - count - cost, now + window, 0
end

return decideEach(KEYS, ARGV, 1, 3, now, decide)

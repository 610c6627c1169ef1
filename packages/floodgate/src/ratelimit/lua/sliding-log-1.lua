--[[
sliding-log-1.lua: sliding log, one decision. Exact: at most `limit` units
in any trailing windowMs (Redis clock).

The log is a ZSET scored by admission time (ms); each admitted unit adds one
unique member "<nowMs>-<n>", never a bare timestamp, so two units in the
same millisecond both count. n starts after the current count and ZADD NX
proves each member new (a taken one, e.g. after the Redis clock stepped
back, is skipped for the next n), so no sequence key is needed. Rejected
requests are not recorded. Members with score <= now - windowMs have left
the window and are removed first.

KEYS[1]  log: ZSET member "<ms>-<n>", score = admission time (ms since epoch)
ARGV[1]  limit: units admitted per trailing window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)
ARGV[3]  cost: units this request takes (integer >= 1)

Returns: an array of integers:
  [1] allowed: 1 admitted (cost consumed), 0 rejected (nothing recorded)
  [2] remaining: units left in the trailing window after the decision
  [3] resetAtMs: when every logged unit has left the window (ms since epoch)
  [4] retryAfterMs: 0 if admitted; ms until this cost fits; -1 if cost > limit
  [5] nowMs: the Redis TIME used for the decision (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/sliding-log-reset"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = redisNowMs()

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])

if cost > limit or count + cost > limit then
  if count > 0 and redis.call('PTTL', KEYS[1]) == -1 then
    redis.call('PEXPIRE', KEYS[1], window)
  end
  local resetAt = slidingLogResetAt(KEYS[1], window, now)
  local left = math.max(0, limit - count)
  if cost > limit then
    return { 0, left, resetAt, -1, now }
  end
  -- the (count + cost - limit)-th oldest unit must leave before this cost fits
  local index = count + cost - limit - 1
  local entry = redis.call('ZRANGE', KEYS[1], index, index, 'WITHSCORES')
  local retryAfter = math.max(1, tonumber(entry[2]) + window - now)
  return { 0, left, resetAt, retryAfter, now }
end

local n = count
if cost == 1 then
  repeat
    n = n + 1
  until redis.call('ZADD', KEYS[1], 'NX', now, now .. '-' .. n) == 1
else
  local added = 0
  while added < cost do
    local batch = {}
    for i = 1, math.min(cost - added, 500) do
      n = n + 1
      batch[2 * i - 1] = now
      batch[2 * i] = now .. '-' .. n
    end
    added = added + redis.call('ZADD', KEYS[1], 'NX', unpack(batch))
  end
end
redis.call('PEXPIRE', KEYS[1], window)
return { 1, limit - count - cost, now + window, 0, now }

--[[
sliding_log-2.lua: sliding log, one decision. Exact: at most `limit` units
in any trailing windowMs (Redis clock).

The log is a ZSET scored by admission time (ms); each admitted unit adds one
unique member "<nowMs>-<seq>" (seq from the companion counter), never a bare
timestamp, so two units in the same millisecond both count. Rejected
requests are not recorded. Members with score <= now - windowMs have left
the window and are removed first. Both keys share the limiter key's hash tag.

KEYS[1]  log: ZSET member "<ms>-<seq>", score = admission time (ms since epoch)
KEYS[2]  sequence counter that makes members unique (string integer)
ARGV[1]  limit: units admitted per trailing window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)
ARGV[3]  cost: units this request takes (integer >= 1)

Returns an array of integers:
  [1] allowed: 1 admitted (cost consumed), 0 rejected (nothing recorded)
  [2] remaining: units left in the trailing window after the decision
  [3] resetAtMs: when every logged unit has left the window (ms since epoch)
  [4] retryAfterMs: 0 if admitted; ms until this cost fits; -1 if cost > limit
  [5] nowMs: the Redis TIME used for the decision (ms since epoch)
]]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])

local function resetAt()
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if newest[2] == nil then return now end
  return tonumber(newest[2]) + window
end

if cost > limit or count + cost > limit then
  for i = 1, 2 do
    if redis.call('PTTL', KEYS[i]) == -1 then
      redis.call('PEXPIRE', KEYS[i], window)
    end
  end
  local left = math.max(0, limit - count)
  if cost > limit then
    return { 0, left, resetAt(), -1, now }
  end
  -- the (count + cost - limit)-th oldest unit must leave before this cost fits
  local index = count + cost - limit - 1
  local entry = redis.call('ZRANGE', KEYS[1], index, index, 'WITHSCORES')
  local retryAfter = math.max(1, tonumber(entry[2]) + window - now)
  return { 0, left, resetAt(), retryAfter, now }
end

local seq = redis.call('INCRBY', KEYS[2], cost)
local batch = {}
for i = cost - 1, 0, -1 do
  batch[#batch + 1] = now
  batch[#batch + 1] = now .. '-' .. (seq - i)
  if #batch >= 1000 then
    redis.call('ZADD', KEYS[1], unpack(batch))
    batch = {}
  end
end
if #batch > 0 then
  redis.call('ZADD', KEYS[1], unpack(batch))
end
redis.call('PEXPIRE', KEYS[1], window)
redis.call('PEXPIRE', KEYS[2], window)
return { 1, limit - count - cost, now + window, 0, now }

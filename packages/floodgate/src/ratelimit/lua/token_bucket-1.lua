--[[
token_bucket-1.lua: token bucket, one decision.

A bucket of `burst` tokens refilled continuously at limit / windowMs tokens
per ms (Redis clock); a request takes `cost` tokens or nothing. A missing
bucket is full, so the key expires (PEXPIRE) when the bucket would be full
again; a bucket that lost its TTL is re-armed. Admitted units over any
interval of d ms: at most burst + limit x d / windowMs.

KEYS[1]  bucket: HASH { tokens = float, ts = ms of the last update }
ARGV[1]  limit: tokens refilled per window (integer >= 1)
ARGV[2]  windowMs: refill window (ms, integer >= 1)
ARGV[3]  cost: tokens this request takes (integer >= 1)
ARGV[4]  burst: bucket capacity (tokens, integer >= 1)

Returns an array of integers:
  [1] allowed: 1 admitted (tokens taken), 0 rejected (nothing taken)
  [2] remaining: whole tokens left after the decision
  [3] resetAtMs: when the bucket is full again (ms since epoch)
  [4] retryAfterMs: 0 if admitted; ms until `cost` tokens are there; -1 if cost > burst
  [5] nowMs: the Redis TIME used for the decision (ms since epoch)
]]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = limit / window

local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = burst
local ts = now
if state[1] then
  tokens = tonumber(state[1])
  ts = tonumber(state[2])
  if now > ts then
    tokens = math.min(burst, tokens + (now - ts) * rate)
  end
end

local function fullIn(level)
  return math.ceil((burst - level) / rate)
end

if cost > burst or tokens < cost then
  if state[1] and redis.call('PTTL', KEYS[1]) == -1 then
    redis.call('PEXPIRE', KEYS[1], fullIn(tokens) + 1)
  end
  local retryAfter = -1
  if cost <= burst then
    retryAfter = math.max(1, math.ceil((cost - tokens) / rate))
  end
  return { 0, math.floor(tokens + 1e-9), now + fullIn(tokens), retryAfter, now }
end

tokens = tokens - cost
-- a Lua number argument is written in its shortest round-trip form (exact, no string.format)
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', math.max(ts, now))
redis.call('PEXPIRE', KEYS[1], fullIn(tokens) + 1)
return { 1, math.floor(tokens + 1e-9), now + fullIn(tokens), 0, now }

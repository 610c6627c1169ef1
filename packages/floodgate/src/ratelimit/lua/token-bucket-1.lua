--[[
token-bucket-1.lua: token bucket, one decision.

A bucket of `burst` tokens refilled continuously at rate = limit / windowMs
tokens per ms (Redis clock); a request takes `cost` tokens or nothing.
The state is one number, the time the bucket is full again (fullAt): the
bucket holds burst - (fullAt - now) x rate tokens at `now` (burst when
fullAt <= now), the token bucket in the one-timestamp form GCRA uses (Brandur
Leach, "Rate Limiting, Cells, and GCRA", 2015). Taking c tokens moves fullAt
to max(fullAt, now) + c / rate. If the Redis clock steps back, the bucket
holds fewer tokens, never more. A missing key is a full bucket, so the key
expires (PX) at fullAt; a bucket that lost its TTL is re-armed. A bucket
written by an earlier version as HASH { tokens, ts } is read and replaced
on the next admission. Admitted units over any interval of d ms: at most
burst + limit x d / windowMs.

KEYS[1]  bucket: STRING fullAt (ms since epoch, a decimal number)
ARGV[1]  limit: tokens refilled per window (integer >= 1)
ARGV[2]  windowMs: refill window (ms, integer >= 1)
ARGV[3]  cost: tokens this request takes (integer >= 1)
ARGV[4]  burst: bucket capacity (tokens, integer >= 1)

Returns: an array of integers:
  [1] allowed: 1 admitted (tokens taken), 0 rejected (nothing taken)
  [2] remaining: whole tokens left after the decision
  [3] resetAtMs: when the bucket is full again (ms since epoch)
  [4] retryAfterMs: 0 if admitted; ms until `cost` tokens are there; -1 if cost > burst
  [5] nowMs: the Redis TIME used for the decision (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/token-bucket-state"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local now = redisNowMs()
local rate = limit / window

local fullAt, stored = tokenBucketFullAt(KEYS[1], now, burst, rate)
local tokens = burst - (fullAt - now) * rate

if cost > burst or tokens < cost - 1e-9 then
  if stored and redis.call('PTTL', KEYS[1]) == -1 then
    redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(fullAt - now)))
  end
  local retryAfter = -1
  if cost <= burst then
    retryAfter = math.max(1, math.ceil((cost - tokens) / rate - 1e-9))
  end
  return { 0, math.max(0, math.floor(tokens + 1e-9)), math.ceil(fullAt), retryAfter, now }
end

fullAt = fullAt + cost / rate
-- a Lua number argument is written in its shortest round-trip form (exact, no string.format)
redis.call('SET', KEYS[1], fullAt, 'PX', math.max(1, math.ceil(fullAt - now)))
return { 1, math.max(0, math.floor(burst - (fullAt - now) * rate + 1e-9)), math.ceil(fullAt), 0, now }

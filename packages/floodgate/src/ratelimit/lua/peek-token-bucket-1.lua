--[[
peek-token-bucket-1.lua: token bucket, read only (no token taken, nothing
written). Same state as token-bucket-n.lua: the key holds the time the bucket
is full again (fullAt, ms since epoch); a missing key is a full bucket.

KEYS[1]  fullAt (decimal string)
ARGV[1]  limit: tokens refilled per window (integer >= 1)
ARGV[2]  windowMs: window (ms, integer >= 1)
ARGV[3]  burst: bucket capacity (integer >= 1)

Returns: an array of integers:
  [1] remaining: whole tokens in the bucket now
  [2] resetAtMs: when the bucket is full again (ms since epoch)
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/token-bucket-state"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now = redisNowMs()
local rate = limit / window

local fullAt = tokenBucketFullAt(KEYS[1], now, burst, rate)
local tokens = burst - (fullAt - now) * rate
return { math.max(0, math.floor(tokens + 1e-9)), math.ceil(fullAt), now }

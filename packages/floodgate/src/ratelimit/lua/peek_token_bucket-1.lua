--[[
peek_token_bucket-1.lua: token bucket, read only (no token taken, nothing
written). Same state as token_bucket-1.lua: the key holds the time the bucket
is full again (fullAt, ms since epoch); a missing key is a full bucket.

KEYS[1]  fullAt (decimal string)
ARGV[1]  limit: tokens refilled per window (integer >= 1)
ARGV[2]  windowMs: window (ms, integer >= 1)
ARGV[3]  burst: bucket capacity (integer >= 1)

Returns an array of integers:
  [1] remaining: whole tokens in the bucket now
  [2] resetAtMs: when the bucket is full again (ms since epoch)
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = limit / window

local stored = redis.pcall('GET', KEYS[1])
local fullAt = now
if type(stored) == 'string' then
  fullAt = math.max(now, tonumber(stored))
elseif type(stored) == 'table' then
  -- WRONGTYPE: a HASH { tokens, ts } from an earlier version
  local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
  if state[1] then
    local tokens = tonumber(state[1])
    local ts = tonumber(state[2])
    if now > ts then tokens = math.min(burst, tokens + (now - ts) * rate) end
    fullAt = now + (burst - tokens) / rate
  end
end
local tokens = burst - (fullAt - now) * rate
return { math.max(0, math.floor(tokens + 1e-9)), math.ceil(fullAt), now }

--[[
peek-sliding-log-1.lua: sliding log, read only (no unit consumed, nothing
written, expired entries left for the next decision to trim). Counts the
entries of the last windowMs, as sliding-log-n.lua does after trimming.

KEYS[1]  sorted set of admitted units, score = admission time (ms since epoch)
ARGV[1]  limit: units admitted per window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)

Returns: an array of integers:
  [1] remaining: units a request could take now
  [2] resetAtMs: newest entry + windowMs (ms since epoch), now when the log is empty
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/sliding-log-reset"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = redisNowMs()

local count = redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf')
local resetAt = now
if count > 0 then
  resetAt = slidingLogResetAt(KEYS[1], window, now)
end
return { math.max(0, limit - count), resetAt, now }

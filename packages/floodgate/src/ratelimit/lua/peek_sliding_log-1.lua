--[[
peek_sliding_log-1.lua: sliding log, read only (no unit consumed, nothing
written, expired entries left for the next decision to trim). Counts the
entries of the last windowMs, as sliding_log-1.lua does after trimming.

KEYS[1]  sorted set of admitted units, score = admission time (ms since epoch)
ARGV[1]  limit: units admitted per window (integer >= 1)
ARGV[2]  windowMs: window length (ms, integer >= 1)

Returns an array of integers:
  [1] remaining: units a request could take now
  [2] resetAtMs: newest entry + windowMs (ms since epoch), now when the log is empty
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local count = redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf')
local resetAt = now
if count > 0 then
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  resetAt = tonumber(newest[2]) + window
end
return { math.max(0, limit - count), resetAt, now }

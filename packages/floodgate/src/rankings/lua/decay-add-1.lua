--[[
decay-add-1.lua: records one event in a log-space exponentially decayed score
(the alternative to minute buckets; one ZADD per event, no re-scoring).

The score of an item is s = log(sum_i exp(lambda * t_i)) over its events
t_i (ms since ARGV[3]); at query time T its decayed count is
exp(s - lambda * T), so ordering by s orders by decayed count without ever
re-scoring. Update: s' = logaddexp(s, lambda * t) = hi + log(1 + exp(lo - hi)).

KEYS[1]  ZSET of decayed scores for one partition, metric and window
ARGV[1]  member: the item id zero-padded to 20 digits
ARGV[2]  lambda, decay rate per ms (= ln 2 / half-life in ms), > 0
ARGV[3]  origin (ms since the Unix epoch) that t is measured from
ARGV[4]  K: entries to keep (the lowest are trimmed), >= 1

Time t comes from redis.call('TIME').
Returns: the new score as a string (Lua numbers would be truncated to integers).
Errors:  'ERR non-finite decayed score' if the result is NaN or infinite (nothing written).
]]
--- @include "../../redis/lua/includes/now-ms"
local lambda = tonumber(ARGV[2])
local origin = tonumber(ARGV[3])
local keep = tonumber(ARGV[4])
local t = redisNowMs() - origin
local x = lambda * t

local score = x
local old = redis.call('ZSCORE', KEYS[1], ARGV[1])
if old then
  local s = tonumber(old)
  local hi, lo = s, x
  if x > s then hi, lo = x, s end
  score = hi + math.log(1 + math.exp(lo - hi))
end

if score ~= score or score == math.huge or score == -math.huge then
  return redis.error_reply('ERR non-finite decayed score')
end

redis.call('ZADD', KEYS[1], string.format('%.17g', score), ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(keep + 1))
return string.format('%.17g', score)

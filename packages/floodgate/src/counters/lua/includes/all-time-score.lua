--[[
all-time-score.lua (include): setAllTimeScore(key, member, score, keep) puts
a restored count into an all-time ranking ZSET: score > 0 sets it and trims
the ZSET to its `keep` highest entries; 0 removes the member.
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]
local function setAllTimeScore(key, member, score, keep)
  if score > 0 then
    redis.call('ZADD', key, score, member)
    redis.call('ZREMRANGEBYRANK', key, 0, -(keep + 1))
  else
    redis.call('ZREM', key, member)
  end
end

--[[
now-ms.lua (include): redisNowMs(), the Redis server clock (TIME) in whole ms
since the Unix epoch, so every instance decides on one clock.
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]
local function redisNowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

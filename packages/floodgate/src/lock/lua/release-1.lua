--[[
release-1.lua: releases a mutex only if it is still ours (compare-and-delete).

KEYS[1]  lock key
ARGV[1]  token: the holder's random token

Returns: 1 when the key held our token and was deleted; 0 when it was gone
         or held another token (then nothing is touched).
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0

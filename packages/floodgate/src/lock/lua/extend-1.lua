--[[
extend-1.lua: extends a mutex's TTL only if it is still ours (compare-and-PEXPIRE).
Never SETs the key: a late renewal cannot re-acquire a lock that expired
or that someone else took meanwhile.

KEYS[1]  lock key
ARGV[1]  token: the holder's random token
ARGV[2]  ttl (ms): new TTL counted from now, integer >= 1

Returns: 1 when the key held our token and its TTL was reset; 0 when it was
         gone or held another token (then nothing is touched).
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0

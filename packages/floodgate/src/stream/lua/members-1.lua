--[[
members-1.lua: one heartbeat of a consumer in its group's member set, and the
live members, in one step. A consumer that has not beaten for ARGV[2] ms is
dropped, so the streams it was assigned go to the others. Redis' clock is the
only clock, so consumers on hosts with skewed clocks agree.

KEYS[1]  the member set (ZSET: consumer name -> last heartbeat, Redis TIME in ms)

ARGV[1]  this consumer's name
ARGV[2]  member TTL (ms)

Returns: the live members' names (in score order; callers sort them)
]]
--- @include "../../redis/lua/includes/now-ms"
local nowMs = redisNowMs()
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], nowMs, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (nowMs - ttl))
redis.call('PEXPIRE', KEYS[1], ttl)
return redis.call('ZRANGE', KEYS[1], 0, -1)

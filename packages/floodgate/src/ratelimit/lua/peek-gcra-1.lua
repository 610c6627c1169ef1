--[[
peek-gcra-1.lua: GCRA (Brandur Leach 2015), read only (no unit consumed,
nothing written). Same state as gcra-n.lua: the key holds the theoretical
arrival time (TAT); a missing key is full capacity.

KEYS[1]  theoretical arrival time (ms since epoch, decimal string)
ARGV[1]  limit: units per window, the sustained rate (integer >= 1)
ARGV[2]  windowMs: window (ms, integer >= 1)
ARGV[3]  burst: units admitted at once from idle (integer >= 1)

Returns: an array of integers:
  [1] remaining: whole units admissible now
  [2] resetAtMs: when the TAT is reached, full capacity again (ms since epoch)
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/gcra-state"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now = redisNowMs()
local interval = window / limit
local tau = burst * interval

local tat = gcraTat(KEYS[1], now)
return { gcraRemaining(tat, now, tau, interval), math.ceil(tat), now }

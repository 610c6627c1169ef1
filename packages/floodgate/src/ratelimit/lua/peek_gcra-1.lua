--[[
peek_gcra-1.lua: GCRA (Brandur Leach 2015), read only (no unit consumed,
nothing written). Same state as gcra-1.lua: the key holds the theoretical
arrival time (TAT); a missing key is full capacity.

KEYS[1]  theoretical arrival time (ms since epoch, decimal string)
ARGV[1]  limit: units per window, the sustained rate (integer >= 1)
ARGV[2]  windowMs: window (ms, integer >= 1)
ARGV[3]  burst: units admitted at once from idle (integer >= 1)

Returns an array of integers:
  [1] remaining: whole units admissible now
  [2] resetAtMs: when the TAT is reached, full capacity again (ms since epoch)
  [3] nowMs: the Redis TIME read (ms since epoch)
]]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = window / limit
local tau = burst * interval

local stored = redis.call('GET', KEYS[1])
local tat = now
if stored then
  tat = math.max(tonumber(stored), now)
end
return { math.max(0, math.floor((tau - (tat - now)) / interval + 1e-9)), math.ceil(tat), now }

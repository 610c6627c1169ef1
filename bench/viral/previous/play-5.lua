--[[
play-5.lua (main before issue 25, kept as bench/viral/plays.ts's baseline; the now-ms include
inlined): count a play once per viewer per item per dedupe window. If this
viewer has not been seen on this item inside the window, increment the play
counter, the rankings, and append an event; otherwise change nothing.

KEYS[1]  dedupe marker STRING (…:ix:{ix:<p>}:seen:<itemId>:<viewer>), lives for the dedupe window
KEYS[2]  play counter STRING (…:ix:{ix:<p>}:plays:<itemId>)
KEYS[3]  all-time plays ranking ZSET of the partition (…:rank:{ix:<p>}:all:plays)
KEYS[4]  per-minute bucket key PREFIX (…:rank:{ix:<p>}:min:plays:); the bucket is KEYS[4] .. <unix minute
         from TIME>, same hash tag, same slot
KEYS[5]  the partition's event STREAM (…:ix:{ix:<p>}:stream)

ARGV[1]  dedupe window (ms)
ARGV[2]  item id (decimal string)
ARGV[3]  ranking member: the item id zero-padded to 20 digits
ARGV[4]  viewer: 'u<userId>' or 'a<hash of client IP + user agent>'
ARGV[5]  top K kept in the all-time ranking ZSET (integer >= 1)
ARGV[6]  minute bucket TTL (ms)

Returns: { counted (1 counted, 0 a repeat inside the window),
           count (the play counter after the call; 0 if it does not exist),
           event id (stream id of the appended event, or '' when not counted) }
Event fields: k 'play', v item id, w viewer, t Redis time (ms).
]]
local function redisNowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local fresh = redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1])
if not fresh then
  return { 0, tonumber(redis.call('GET', KEYS[2]) or '0'), '' }
end

local count = redis.call('INCR', KEYS[2])
local nowMs = redisNowMs()

redis.call('ZADD', KEYS[3], count, ARGV[3])
if redis.call('ZCARD', KEYS[3]) > tonumber(ARGV[5]) then
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(tonumber(ARGV[5]) + 1))
end
local bucket = KEYS[4] .. math.floor(nowMs / 60000)
redis.call('ZINCRBY', bucket, 1, ARGV[3])
redis.call('PEXPIRE', bucket, ARGV[6])

local id = redis.call('XADD', KEYS[5], '*', 'k', 'play', 'v', ARGV[2], 'w', ARGV[4], 't', nowMs)
return { 1, count, id }

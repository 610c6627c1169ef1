--[[
play-6.lua: count a play once per viewer per item per dedupe window, without a key per
viewer. If the viewer's hash is not in the item's seen-set of this generation or the one
before, add it to this generation's set, increment the play counter, the rankings, and
append an event; otherwise change nothing. Refused (changes nothing) while the item's tombstone
KEYS[6] exists: a forgotten (deleted) item's keys are not created again.

KEYS[1]  PREFIX of the item's seen keys (…:ix:{<tag>}:seen:<itemId>:); generation g's keys are
         KEYS[1] .. g .. ':n' (STRING, its hashes) and KEYS[1] .. g .. ':' .. <bucket> (SET of
         viewer hashes), same hash tag, same slot (built here, like KEYS[4]'s buckets)
KEYS[2]  play counter STRING (…:ix:{<tag>}:plays:<itemId>)
KEYS[3]  all-time plays ranking ZSET of the partition (…:rank:{<tag>}:all:plays)
KEYS[4]  per-minute bucket key PREFIX (…:rank:{<tag>}:min:plays:); the bucket is KEYS[4] .. <unix minute
         from TIME>, same hash tag, same slot
KEYS[5]  the partition's event STREAM (…:ix:{<tag>}:stream)
KEYS[6]  the item's tombstone STRING (…:ix:{<tag>}:gone:<itemId>), set by Interactions.forget

ARGV[1]  dedupe window W (ms, integer >= 1): the generation length
ARGV[2]  item id (decimal string)
ARGV[3]  ranking member: the item id zero-padded to 20 digits
ARGV[4]  viewer: 'u<userId>' or 'a<hash of client IP + user agent>' (for the event)
ARGV[5]  top K kept in the all-time ranking ZSET (integer >= 1)
ARGV[6]  minute bucket TTL (ms)
ARGV[7]  viewer hash h: decimal integer in [1, 2^53 - 1], canonical (no sign, no leading zero)
ARGV[8]  split load T (integer >= 1): a generation of n hashes has max(1, ceil(n / T)) buckets
ARGV[9]  optional, tests only: the clock (ms since the epoch) to use instead of TIME

Window semantics. Time (ms, Redis TIME) is cut into generations g = floor(now / W), W =
ARGV[1]. A play in generation g counts unless the viewer was counted on this item in
generation g or g - 1; only a counted play enters the set (a repeat adds nothing, so a
viewer who keeps playing counts again once his counted play is two generations old). So a
repeat less than W after the viewer's counted play is never counted, one 2W or more after it
always is, and one in between is counted when it falls two generations after the counted
one: the effective window is between W and 2W (10 to 20 min at the default W = 10 min).

Seen-sets. Generation g of an item is one linear-hashing table (W. Litwin, "Linear hashing:
a new tool for file and table addressing", VLDB 1980) of SETs of viewer hashes (integers: an
intset at <= set-max-intset-entries, 512 by default, 8 bytes a member), plus a STRING n, the
hashes it holds. With n hashes it has b = max(1, ceil(n / T)) buckets (T = ARGV[8], so b is
never stored: a counted play that makes n > T·b splits one bucket, which is exactly when
n - 1 is a multiple of T); the bucket of hash h is x mod 2^(l+1) when that is < b, else x mod
2^l, where 2^l <= b < 2^(l+1): h's own low bits, uniform as h is (h < 2^53 is exact in a Lua
double). A split moves bucket b - 2^l's hashes that now belong to bucket b:
one bucket of about 2T hashes read and moved (bounded); the average bucket holds T hashes, the
fullest expected one (not yet split in this round) 2T, well below 512. Member 0 is a
placeholder that keeps a bucket emptied by a split alive with its TTL (viewer hashes are >= 1;
it never moves, never counts). Every key of generation g expires at the end of generation g + 1,
when no play reads it any more: old generations leave in small pieces, one bucket at a time.
T must stay the same for a generation's life (it is a constant of the library).

Returns: { counted (1 counted, 0 a repeat inside the window, -1 the item is forgotten: nothing
             read or written but the tombstone, count 0),
           count (the play counter after the call; 0 if it does not exist),
           event id (stream id of the appended event, or '' when not counted) }
Event fields: k 'play', v item id, w viewer, t Redis time (ms).
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/seen-buckets"
if redis.call('EXISTS', KEYS[6]) == 1 then return { -1, 0, '' } end
local window = tonumber(ARGV[1])
local member = ARGV[7]
local load = tonumber(ARGV[8])
local nowMs
if ARGV[9] ~= nil and ARGV[9] ~= '' then nowMs = tonumber(ARGV[9]) else nowMs = redisNowMs() end
local g = math.floor(nowMs / window)
local at = KEYS[1] .. g .. ':'
local before = KEYS[1] .. (g - 1) .. ':'
-- this generation's hashes, the last one's, the play counter (false when absent)
local state = redis.call('MGET', at .. 'n', before .. 'n', KEYS[2])
local x = tonumber(member)

local n = tonumber(state[1]) or 0
local bucket = at .. seenBucketOf(x, n, load)
if redis.call('SADD', bucket, member) == 0 then return { 0, tonumber(state[3]) or 0, '' } end
local last = tonumber(state[2])
if last ~= nil and redis.call('SISMEMBER', before .. seenBucketOf(x, last, load), member) == 1 then
  -- counted in g - 1: a repeat, not added to g. The bucket held other hashes before (every
  -- bucket of a generation that has a count does), so it stays with its TTL; a fresh one goes.
  redis.call('SREM', bucket, member)
  return { 0, tonumber(state[3]) or 0, '' }
end

n = redis.call('INCR', at .. 'n')
local ttl = (g + 2) * window - nowMs
if n == 1 then
  redis.call('PEXPIRE', at .. 'n', ttl)
  redis.call('PEXPIRE', bucket, ttl)
elseif (n - 1) % load == 0 then
  splitSeen(at, n, load, ttl)
end

local count = redis.call('INCR', KEYS[2])

-- a member already ranked leaves the ZSET's size (<= K) as it was: no trim needed
if redis.call('ZADD', KEYS[3], count, ARGV[3]) == 1 and redis.call('ZCARD', KEYS[3]) > tonumber(ARGV[5]) then
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(tonumber(ARGV[5]) + 1))
end
-- the bucket's TTL is armed when the item enters it (its first play of that minute): it
-- expires between bucketTtlMs - 60 s and bucketTtlMs after the item's last play in it
local minute = KEYS[4] .. math.floor(nowMs / 60000)
if tonumber(redis.call('ZINCRBY', minute, 1, ARGV[3])) == 1 then redis.call('PEXPIRE', minute, ARGV[6]) end

local id = redis.call('XADD', KEYS[5], '*', 'k', 'play', 'v', ARGV[2], 'w', ARGV[4], 't', nowMs)
return { 1, count, id }

--[[
toggle-5.lua: set one user's membership (like or favourite) of one item to
an absolute state; only if the membership really changed, update the ranking
and append an event to the partition's stream. Idempotent: a repeated call
with the same state changes nothing and appends nothing. Refused (changes nothing) while the
item's tombstone KEYS[5] exists: a forgotten (deleted) item's keys are not created again.

KEYS[1]  base key of this item's members of this kind (…:likes:<itemId> or …:favorites:<itemId>):
         bucket 0, and the prefix of the item's other buckets (KEYS[1] .. ':' .. i) and of its meta
         HASH (KEYS[1] .. ':m'), which carry KEYS[1]'s hash tag (see includes/member-buckets.lua)
KEYS[2]  all-time ranking ZSET of the partition (…:rank:{<tag>}:all:<metric>); untouched when ARGV[7] = '0'
KEYS[3]  per-minute bucket key PREFIX of the partition (…:rank:{<tag>}:min:<metric>:); the bucket
         is KEYS[3] .. <unix minute from TIME>. It carries the same hash tag as KEYS[1], so it lives in
         the same slot (the BullMQ convention of deriving keys from a declared prefix key).
KEYS[4]  the partition's event STREAM (…:ix:{<tag>}:stream)
KEYS[5]  the item's tombstone STRING (…:ix:{<tag>}:gone:<itemId>), set by Interactions.forget

ARGV[1]  user id (decimal string)
ARGV[2]  desired state: '1' member (liked / favourited), '0' not a member
ARGV[3]  item id (decimal string)
ARGV[4]  ranking member: the item id zero-padded to 20 digits
ARGV[5]  event kind: 'like' or 'favorite'
ARGV[6]  top K kept in the all-time ranking ZSET (integer >= 1)
ARGV[7]  '1' to update the rankings (likes), '0' to skip them (favourites)
ARGV[8]  minute bucket TTL (ms)
ARGV[9]  bucket load: members per bucket on average before a split (integer >= 1)

Returns: { changed (1 membership changed, 0 it was already in that state, -1 the item is
             forgotten: nothing read or written but the tombstone, count 0),
           count (members after the call, exact),
           event id (stream id of the appended event, or '' when unchanged) }
Event fields: k kind, v item id, u user id, s absolute state (1/0), t Redis time (ms).
XADD never trims (MAXLEN): trimming is the flush consumer's job, below its oldest pending entry.
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/member-buckets"
if redis.call('EXISTS', KEYS[5]) == 1 then return { -1, 0, '' } end
local changed, count = setMember(KEYS[1], ARGV[1], ARGV[2] == '1', tonumber(ARGV[9]))
if changed == 0 then
  return { 0, count, '' }
end

local nowMs = redisNowMs()

if ARGV[7] == '1' then
  local topK = tonumber(ARGV[6])
  -- a member already ranked leaves the ZSET's size (<= K) as it was: no trim needed
  if redis.call('ZADD', KEYS[2], count, ARGV[4]) == 1 and redis.call('ZCARD', KEYS[2]) > topK then
    redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(topK + 1))
  end
  local bucket = KEYS[3] .. math.floor(nowMs / 60000)
  local delta = 1
  if ARGV[2] ~= '1' then delta = -1 end
  -- armed when the item enters the bucket (score == its first delta), as play-6.lua
  if tonumber(redis.call('ZINCRBY', bucket, delta, ARGV[4])) == delta then
    redis.call('PEXPIRE', bucket, ARGV[8])
  end
end

local id = redis.call('XADD', KEYS[4], '*', 'k', ARGV[5], 'v', ARGV[3], 'u', ARGV[1], 's', ARGV[2], 't', nowMs)
return { 1, count, id }

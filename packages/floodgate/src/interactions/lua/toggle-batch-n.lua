--[[
toggle-batch-n.lua: the like / favourite toggles of one partition that one process asked for in
one event-loop poll phase, in call order, each with the answer toggle-5.lua would give it called
alone at that point (membership step and stream event per toggle); per item, the rankings
coalesced (one ZADD of its final count, one ZINCRBY of the summed delta into the minute bucket),
then a trim when a ZADD added a member and a PEXPIRE when an item entered the bucket; one TIME; each item's bucket meta read and written
once. Every argument is checked before the first write (a refused batch changes nothing).

KEYS[1]  all-time likes ranking ZSET of the partition (…:rank:{<tag>}:all:likes)
KEYS[2]  per-minute bucket key PREFIX of the partition (…:rank:{<tag>}:min:likes:); the bucket is
         KEYS[2] .. <unix minute from TIME>, same hash tag, same slot (as in toggle-5.lua)
KEYS[3]  the partition's event STREAM (…:ix:{<tag>}:stream)
KEYS[3 + 2(j-1) + 1]  unit j's member base key (…:likes:<itemId> or …:favorites:<itemId>; its
         buckets and meta are named from it, see includes/member-buckets.lua)
KEYS[3 + 2(j-1) + 2]  unit j's item tombstone (…:ix:{<tag>}:gone:<itemId>), j = 1 … U,
         U = (#KEYS - 3) / 2 >= 1: a unit is one item and kind, sent once however many of the
         batch's toggles touch it. A unit whose tombstone exists is forgotten (deleted): each of
         its toggles answers { -1, 0, '' } and touches nothing, the batch's other units go on.

ARGV[1]  top K kept in the all-time ranking ZSET (integer >= 1)
ARGV[2]  minute bucket TTL (ms)
ARGV[3]  bucket load: members per bucket on average before a split (integer >= 1)
ARGV[3 + 3(j-1) + 1 … 3]  unit j: item id, ranking member (item id zero-padded to 20 digits),
         kind ('like': ranked, or 'favorite': not ranked)
ARGV[3 + 3U + 4(i-1) + 1 … 4]  toggle i (i = 1 … N, N >= 1): user id, desired state ('1' / '0'),
         its unit j, the user id's member hash (memberHash of includes/member-buckets.lua: the
         first 32 bits of its SHA-1, computed by the caller so Redis does not hash every toggle)

Returns: 3N values, toggle i's at 3(i-1)+1 …: changed (1/0, -1 its item is forgotten), count after its step (exact),
         event id (or '' when unchanged); toggle-5.lua's reply, in call order.
Event fields, one entry per changed toggle: k kind, v item id, u user id, s state, t Redis time
(ms, one TIME per batch), as toggle-5.lua. The all-time ZSET is trimmed to K once, after the
batch's ZADDs (toggle-5.lua trims after each), and only when they added a member.
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/member-buckets"
local UNIT, PER = 3, 4
local units = (#KEYS - 3) / 2
local first = 3 + UNIT * units
local n = (#ARGV - first) / PER
if units < 1 or units ~= math.floor(units) or n < 1 or n ~= math.floor(n) then
  return redis.error_reply('ERR toggle-batch: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments do not make a batch')
end
local topK, load = tonumber(ARGV[1]), tonumber(ARGV[3])
if not topK or topK < 1 or not load or load < 1 or not tonumber(ARGV[2]) then
  return redis.error_reply('ERR toggle-batch: top K, bucket TTL and load must be numbers >= 1')
end
for j = 1, units do
  local kind = ARGV[3 + UNIT * (j - 1) + 3]
  if kind ~= 'like' and kind ~= 'favorite' then
    return redis.error_reply('ERR toggle-batch: unit ' .. j .. ' has kind ' .. kind)
  end
end
for i = 1, n do
  local a = first + PER * (i - 1)
  local state, unit, h = ARGV[a + 2], tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  if (state ~= '1' and state ~= '0') or not unit or unit < 1 or unit > units or unit ~= math.floor(unit)
    or not h or h < 0 or h >= 4294967296 or h ~= math.floor(h) then
    return redis.error_reply('ERR toggle-batch: toggle ' .. i .. ' has state ' .. state .. ', unit ' .. ARGV[a + 3] .. ', hash ' .. ARGV[a + 4])
  end
end

local opened = {}
-- unit j's tombstone read once: true when the item is forgotten
local gone = {}
for j = 1, units do gone[j] = redis.call('EXISTS', KEYS[3 + 2 * j]) == 1 end
local ranked, rankOrder = {}, {}
local reply = {}
local nowMs, nowText
for i = 1, n do
  local a = first + PER * (i - 1)
  local j = tonumber(ARGV[a + 3])
  local user, state = ARGV[a + 1], ARGV[a + 2]
  local on = state == '1'
  local changed, count = -1, 0
  if not gone[j] then
    local st = opened[j]
    if st == nil then
      st = openMembers(KEYS[2 + 2 * j])
      opened[j] = st
    end
    changed, count = toggleMember(st, user, tonumber(ARGV[a + 4]), on, load)
  end
  local id = ''
  if changed == 1 then
    if nowMs == nil then
      nowMs = redisNowMs()
      nowText = tostring(nowMs)
    end
    local u = 3 + UNIT * (j - 1)
    local kind = ARGV[u + 3]
    if kind == 'like' then
      local r = ranked[j]
      if r == nil then
        r = { count = 0, delta = 0 }
        ranked[j] = r
        rankOrder[#rankOrder + 1] = j
      end
      r.count = count
      if on then r.delta = r.delta + 1 else r.delta = r.delta - 1 end
    end
    id = redis.call('XADD', KEYS[3], '*', 'k', kind, 'v', ARGV[u + 1], 'u', user, 's', state, 't', nowText)
  end
  reply[3 * i - 2] = changed
  reply[3 * i - 1] = count
  reply[3 * i] = id
end
for j = 1, units do
  if opened[j] ~= nil then closeMembers(opened[j]) end
end

if #rankOrder > 0 then
  local bucket = KEYS[2] .. math.floor(nowMs / 60000)
  local added, entered = 0, false
  for _, j in ipairs(rankOrder) do
    local r = ranked[j]
    local member = ARGV[3 + UNIT * (j - 1) + 2]
    added = added + redis.call('ZADD', KEYS[1], r.count, member)
    -- score == delta: the item may have just entered the bucket (or the bucket is new)
    if tonumber(redis.call('ZINCRBY', bucket, r.delta, member)) == r.delta then entered = true end
  end
  -- members already ranked leave the ZSET's size (<= K) as it was: no trim needed
  if added > 0 and redis.call('ZCARD', KEYS[1]) > topK then
    redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(topK + 1))
  end
  -- armed when an item enters the bucket, as play-6.lua
  if entered then redis.call('PEXPIRE', bucket, ARGV[2]) end
end
return reply

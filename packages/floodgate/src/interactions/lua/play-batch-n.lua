--[[
play-batch-n.lua: the plays of one partition that one process asked for in one event-loop poll
phase, in call order, each with the answer play-6.lua would give it called alone at that point
(same window generations, seen-set buckets and splits: see play-6.lua's header). Per item, its
generation's hash count and play counter are read once (one MGET) and written once (SET of the
count with the generation's TTL / INCRBY), the rankings coalesced (one ZADD of the final count,
one ZINCRBY of its counted plays into the minute bucket, armed with the bucket TTL when the item
enters the bucket, as play-6.lua); one trim; one TIME for the batch. Every argument is checked
before the first write (a refused batch changes nothing).

KEYS[1]  all-time plays ranking ZSET of the partition (…:rank:{<tag>}:all:plays)
KEYS[2]  per-minute bucket key PREFIX (…:rank:{<tag>}:min:plays:); the bucket is KEYS[2] .. <unix
         minute>, same hash tag, same slot
KEYS[3]  the partition's event STREAM (…:ix:{<tag>}:stream)
KEYS[4 + 3(j-1)]  unit j's seen-key PREFIX (…:ix:{<tag>}:seen:<itemId>:), as play-6.lua's KEYS[1]
KEYS[5 + 3(j-1)]  unit j's play counter STRING (…:ix:{<tag>}:plays:<itemId>)
KEYS[6 + 3(j-1)]  unit j's item tombstone (…:ix:{<tag>}:gone:<itemId>), j = 1 … U,
         U = (#KEYS - 3) / 3 >= 1: a unit is one item, sent once however many plays touch it. A
         unit whose tombstone exists is forgotten (deleted): each of its plays answers
         { -1, 0, '' } and touches nothing, the batch's other units go on.

ARGV[1]  dedupe window W (ms, integer >= 1): the generation length
ARGV[2]  top K kept in the all-time ranking ZSET (integer >= 1)
ARGV[3]  minute bucket TTL (ms)
ARGV[4]  split load T (integer >= 1), as play-6.lua's ARGV[8]
ARGV[5]  the clock (ms since the epoch) to use instead of TIME; '' = TIME (tests only set it)
ARGV[5 + 2(j-1) + 1 … 2]  unit j: item id, ranking member (item id zero-padded to 20 digits)
ARGV[5 + 2U + 3(i-1) + 1 … 3]  play i (i = 1 … N, N >= 1): viewer ('u<userId>' / 'a<hash>', for
         the event), viewer hash h (decimal, 1 … 2^53 - 1), its unit j

Returns: 3N values, play i's at 3(i-1)+1 …: counted (1/0, -1 its item is forgotten), the play counter after its step,
         event id (or '' when not counted); play-6.lua's reply, in call order.
Event fields, one entry per counted play: k 'play', v item id, w viewer, t Redis time (ms), as
play-6.lua. The all-time ZSET is trimmed to K once, after the batch's ZADDs.
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/seen-buckets"
local UNIT, PER = 2, 3
local units = (#KEYS - 3) / 3
local first = 5 + UNIT * units
local n = (#ARGV - first) / PER
if units < 1 or units ~= math.floor(units) or n < 1 or n ~= math.floor(n) then
  return redis.error_reply('ERR play-batch: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments do not make a batch')
end
local window, topK, load = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
if not window or window < 1 or not topK or topK < 1 or not load or load < 1 or not tonumber(ARGV[3]) then
  return redis.error_reply('ERR play-batch: window, top K, bucket TTL and load must be numbers >= 1')
end
if ARGV[5] ~= '' and not tonumber(ARGV[5]) then return redis.error_reply('ERR play-batch: clock is not a number') end
for i = 1, n do
  local a = first + PER * (i - 1)
  local h, unit = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  if not h or h < 1 or h ~= math.floor(h) or not unit or unit < 1 or unit > units or unit ~= math.floor(unit) then
    return redis.error_reply('ERR play-batch: play ' .. i .. ' has viewer hash ' .. ARGV[a + 2] .. ', unit ' .. ARGV[a + 3])
  end
end

local nowMs
if ARGV[5] ~= '' then nowMs = tonumber(ARGV[5]) else nowMs = redisNowMs() end
local g = math.floor(nowMs / window)
local ttl = (g + 2) * window - nowMs

local opened, items = {}, {}
local reply = {}
local counted = false
local nowText = tostring(nowMs)
for i = 1, n do
  local a = first + PER * (i - 1)
  local j = tonumber(ARGV[a + 3])
  local st = opened[j]
  if st == nil then
    local prefix, counter = KEYS[4 + 3 * (j - 1)], KEYS[5 + 3 * (j - 1)]
    if redis.call('EXISTS', KEYS[6 + 3 * (j - 1)]) == 1 then
      st = false -- forgotten: its plays answer -1 and touch nothing
    else
      local at = prefix .. g .. ':'
      local before = prefix .. (g - 1) .. ':'
      local state = redis.call('MGET', at .. 'n', before .. 'n', counter)
      local seen = tonumber(state[1]) or 0
      local count = tonumber(state[3]) or 0
      -- shapes and bucket key names kept for the batch: recomputed only when a split changes them
      st = { at = at, before = before, counter = counter, item = ARGV[5 + UNIT * (j - 1) + 1],
             member = ARGV[5 + UNIT * (j - 1) + 2], seen = seen, seen0 = seen, last = tonumber(state[2]),
             count = count, count0 = count, names = {} }
      st.buckets, st.half = seenShape(seen, load)
      if st.last ~= nil then st.lastBuckets, st.lastHalf = seenShape(st.last, load) end
      items[#items + 1] = st
    end
    opened[j] = st
  end
  if st == false then
    reply[3 * i - 2] = -1
    reply[3 * i - 1] = 0
    reply[3 * i] = ''
  else
    local hash = ARGV[a + 2]
    local x = tonumber(hash)
    local b = seenAddress(x, st.buckets, st.half)
    local bucket = st.names[b]
    if bucket == nil then
      bucket = st.at .. b
      st.names[b] = bucket
    end
    local id = ''
    local yes = 0
    if redis.call('SADD', bucket, hash) == 1 then
      if st.last ~= nil and redis.call('SISMEMBER', st.before .. seenAddress(x, st.lastBuckets, st.lastHalf), hash) == 1 then
        -- counted in g - 1: a repeat, not added to g (see play-6.lua)
        redis.call('SREM', bucket, hash)
      else
        st.seen = st.seen + 1
        if st.seen == 1 then
          redis.call('PEXPIRE', bucket, ttl)
        elseif (st.seen - 1) % load == 0 then
          splitSeen(st.at, st.seen, load, ttl)
          st.buckets, st.half = seenShape(st.seen, load)
        end
        st.count = st.count + 1
        counted = true
        yes = 1
        id = redis.call('XADD', KEYS[3], '*', 'k', 'play', 'v', st.item, 'w', ARGV[a + 1], 't', nowText)
      end
    end
    reply[3 * i - 2] = yes
    reply[3 * i - 1] = st.count
    reply[3 * i] = id
  end
end

if counted then
  local minute = KEYS[2] .. math.floor(nowMs / 60000)
  local added = 0
  for _, st in ipairs(items) do
    local plays = st.count - st.count0
    if plays > 0 then
      if st.seen0 == 0 then
        redis.call('SET', st.at .. 'n', st.seen, 'PX', ttl)
      else
        redis.call('INCRBY', st.at .. 'n', st.seen - st.seen0)
      end
      redis.call('INCRBY', st.counter, plays)
      added = added + redis.call('ZADD', KEYS[1], st.count, st.member)
      -- armed when the item enters the bucket (its first play of that minute), as play-6.lua
      if tonumber(redis.call('ZINCRBY', minute, plays, st.member)) == plays then
        redis.call('PEXPIRE', minute, ARGV[3])
      end
    end
  end
  -- members already ranked leave the ZSET's size (<= K) as it was: no trim needed
  if added > 0 and redis.call('ZCARD', KEYS[1]) > topK then
    redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(topK + 1))
  end
end
return reply

--[[
member-buckets.lua (include): one item's members of one kind (likes or favourites) in
buckets small enough for Redis's intset encoding (set-max-intset-entries, 512 by default),
grown by linear hashing (W. Litwin, "Linear hashing: a new tool for file and table
addressing", VLDB 1980): each split moves the members of ONE bucket.

Layout, from the item's base key B (…:ix:{<tag>}:likes:<itemId>, the key of today's one SET):
  B            SET, bucket 0: the whole membership while the item has one bucket
  B .. ':' .. i  SET, bucket i (1 <= i < 2^l + s)
  B .. ':m'    HASH { n = members (exact), l = level, s = split pointer }; absent while the
               item has one bucket (its count is then SCARD B)
Address of member m: h = memberHash(m); a = h mod 2^l; if a < s then a = h mod 2^(l+1).
Hash: the first 32 bits (8 hex digits) of SHA-1 (FIPS 180-4) of the member's string, from
  redis.sha1hex: exact in Lua's doubles, whatever the id's size, and reproducible by any client.
Growth: while n > load * (2^l + s) after an add, bucket s is split: its members with
  h mod 2^(l+1) ~= s move to bucket s + 2^l (about 2 * load members at most), then s = s + 1
  (l = l + 1, s = 0 when s reaches 2^l); at most 4 splits a step. An item stays one bucket
  (no meta, as small as today's one SET) up to 2 * load members, the size a not-yet-split
  bucket reaches anyway; the add past that makes the meta and splits twice (3 buckets).
  Buckets never merge: removes only empty them.
KEYS, ARGV: none read here; the including script passes its keys and values as arguments
(its own header declares KEYS and ARGV).
]]
local function memberHash(m)
  return tonumber(string.sub(redis.sha1hex(m), 1, 8), 16)
end

local function bucketKey(base, i)
  if i == 0 then return base end
  return base .. ':' .. i
end

local function bucketOf(h, l, s)
  local size = 2 ^ l
  local a = h % size
  if a < s then a = h % (size * 2) end
  return a
end

-- Splits bucket s of level l; returns the level and split pointer after.
local function splitBucket(base, l, s)
  local size = 2 ^ l
  local src = bucketKey(base, s)
  -- one bucket, never the item: about 2 x load members at most (an intset), a bounded step
  local members = redis.call('SMEMBERS', src)
  local moved = {}
  for i = 1, #members do
    if memberHash(members[i]) % (size * 2) ~= s then moved[#moved + 1] = members[i] end
  end
  if #moved > 0 then
    redis.call('SREM', src, unpack(moved))
    redis.call('SADD', bucketKey(base, s + size), unpack(moved))
  end
  s = s + 1
  if s == size then return l + 1, 0 end
  return l, s
end

-- Splits while n > load * buckets, at most 4 splits; returns the level and split pointer after.
local function grow(base, n, l, s, load)
  for _ = 1, 4 do
    if n <= load * (2 ^ l + s) then break end
    l, s = splitBucket(base, l, s)
  end
  return l, s
end

-- Adds (on = true) or removes one member; returns changed (1/0) and the count after.
local function setMember(base, m, on, load)
  local meta = base .. ':m'
  local g = redis.call('HMGET', meta, 'n', 'l', 's')
  local cmd = 'SREM'
  if on then cmd = 'SADD' end
  if not g[1] then
    local changed = redis.call(cmd, base, m)
    local n = redis.call('SCARD', base)
    if changed == 1 and n > 2 * load then
      local l, s = grow(base, n, 0, 0, load)
      redis.call('HSET', meta, 'n', n, 'l', l, 's', s)
    end
    return changed, n
  end
  local n, l, s = tonumber(g[1]), tonumber(g[2]), tonumber(g[3])
  if redis.call(cmd, bucketKey(base, bucketOf(memberHash(m), l, s)), m) == 0 then return 0, n end
  if on then
    n = n + 1
    if n > load * (2 ^ l + s) then
      l, s = grow(base, n, l, s, load)
      redis.call('HSET', meta, 'n', n, 'l', l, 's', s)
      return 1, n
    end
  else
    n = n - 1
  end
  redis.call('HSET', meta, 'n', n)
  return 1, n
end

-- Adds members list[from..#list]; returns the count after. One HMGET and at most one HSET.
local function addMembers(base, list, from, load)
  local meta = base .. ':m'
  local g = redis.call('HMGET', meta, 'n', 'l', 's')
  local n, l, s = tonumber(g[1]), tonumber(g[2]), tonumber(g[3])
  local grown = false
  for i = from, #list do
    local m = list[i]
    if n == nil then
      if redis.call('SADD', base, m) == 1 then
        local c = redis.call('SCARD', base)
        if c > 2 * load then
          l, s = grow(base, c, 0, 0, load)
          n = c
          grown = true
        end
      end
    elseif redis.call('SADD', bucketKey(base, bucketOf(memberHash(m), l, s)), m) == 1 then
      n = n + 1
      grown = true
      if n > load * (2 ^ l + s) then l, s = grow(base, n, l, s, load) end
    end
  end
  if n == nil then return redis.call('SCARD', base) end
  if grown then redis.call('HSET', meta, 'n', n, 'l', l, 's', s) end
  return n
end

-- The item's count: the meta's n, else SCARD of the one bucket.
local function memberCount(base)
  local n = redis.call('HGET', base .. ':m', 'n')
  if n then return tonumber(n) end
  return redis.call('SCARD', base)
end

-- 1 when m is a member, else 0.
local function isMember(base, m)
  local g = redis.call('HMGET', base .. ':m', 'l', 's')
  if not g[1] then return redis.call('SISMEMBER', base, m) end
  return redis.call('SISMEMBER', bucketKey(base, bucketOf(memberHash(m), tonumber(g[1]), tonumber(g[2]))), m)
end

-- Batched toggles (toggle-batch-n.lua): one item's geometry read once, written once, in between
-- kept here. The same steps as setMember, so each toggle's answer is the one setMember gives.
-- Opens an item's buckets for a batch: { base, n, l (nil while one bucket), s, dirty }.
local function openMembers(base)
  local g = redis.call('HMGET', base .. ':m', 'n', 'l', 's')
  if not g[1] then return { base = base, n = redis.call('SCARD', base), dirty = false } end
  return { base = base, n = tonumber(g[1]), l = tonumber(g[2]), s = tonumber(g[3]), dirty = false }
end

-- setMember on an opened item, h = memberHash(m) (the caller's, computed off Redis); returns
-- changed (1/0) and the count after.
local function toggleMember(st, m, h, on, load)
  local cmd = 'SREM'
  if on then cmd = 'SADD' end
  if st.l == nil then
    if redis.call(cmd, st.base, m) == 0 then return 0, st.n end
    if on then st.n = st.n + 1 else st.n = st.n - 1 end
    if on and st.n > 2 * load then
      st.l, st.s = grow(st.base, st.n, 0, 0, load)
      st.dirty = true
    end
    return 1, st.n
  end
  if redis.call(cmd, bucketKey(st.base, bucketOf(h, st.l, st.s)), m) == 0 then return 0, st.n end
  st.dirty = true
  if on then
    st.n = st.n + 1
    if st.n > load * (2 ^ st.l + st.s) then st.l, st.s = grow(st.base, st.n, st.l, st.s, load) end
  else
    st.n = st.n - 1
  end
  return 1, st.n
end

-- Writes an opened item's meta once, if a toggle changed it.
local function closeMembers(st)
  if st.dirty then redis.call('HSET', st.base .. ':m', 'n', st.n, 'l', st.l, 's', st.s) end
end

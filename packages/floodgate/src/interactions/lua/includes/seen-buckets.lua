--[[
seen-buckets.lua (include): the play dedupe's seen-sets of one window generation, a
linear-hashing table of intset buckets of viewer hashes (the layout and its argument:
play-6.lua's header). Used by play-6.lua and play-batch-n.lua.
KEYS, ARGV: none read here; the including script passes its keys and values as arguments
(its own header declares KEYS and ARGV).
]]

-- The shape of a generation of n hashes: b = max(1, ceil(n / T)) buckets and 2^l <= b < 2^(l+1);
-- returns b and 2^l.
local function seenShape(n, load)
  local buckets = math.max(1, math.ceil(n / load))
  local half = 1
  while half * 2 <= buckets do half = half * 2 end
  return buckets, half
end

-- The bucket of hash x in a generation of that shape.
local function seenAddress(x, buckets, half)
  local b = x % (half * 2)
  if b >= buckets then b = b - half end
  return b
end

-- The bucket of hash x in a generation of n hashes.
local function seenBucketOf(x, n, load)
  return seenAddress(x, seenShape(n, load))
end

-- The generation (keys `at` .. bucket) now holds n hashes, n - 1 a multiple of T: n > T·b for the
-- b = (n - 1) / T buckets so far, so bucket b - 2^l splits into itself and bucket b (TTL ttl ms).
local function splitSeen(at, n, load, ttl)
  local buckets = (n - 1) / load
  local half = 1
  while half * 2 <= buckets do half = half * 2 end
  local from = buckets - half
  local source = at .. from
  local target = at .. buckets
  -- one bucket, never the generation: about 2T hashes at most, a bounded step
  local members = redis.call('SMEMBERS', source)
  local moving = {}
  for _, m in ipairs(members) do
    if m ~= '0' and tonumber(m) % (half * 2) ~= from then moving[#moving + 1] = m end
  end
  if #moving == #members then redis.call('SADD', source, '0') end
  if #moving == 0 then
    redis.call('SADD', target, '0')
  else
    redis.call('SADD', target, unpack(moving))
    redis.call('SREM', source, unpack(moving))
  end
  redis.call('PEXPIRE', target, ttl)
end

--[[
token-bucket-state.lua (include): tokenBucketFullAt(key, now, burst, rate)
reads a bucket: returns fullAt (ms since epoch, at least now; a missing key is
a full bucket) and the GET reply (false when missing, an error table when the
key is a HASH { tokens, ts } written by an earlier version, which is read too).
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]
local function tokenBucketFullAt(key, now, burst, rate)
  local stored = redis.pcall('GET', key)
  local fullAt = now
  if type(stored) == 'string' then
    fullAt = math.max(now, tonumber(stored))
  elseif type(stored) == 'table' then
    -- WRONGTYPE: a HASH { tokens, ts } from an earlier version
    local state = redis.call('HMGET', key, 'tokens', 'ts')
    if state[1] then
      local tokens = tonumber(state[1])
      local ts = tonumber(state[2])
      if now > ts then tokens = math.min(burst, tokens + (now - ts) * rate) end
      fullAt = now + (burst - tokens) / rate
    end
  end
  return fullAt, stored
end

--[[
lease-grants.lua (include): the record of one window's lease grants, a hash by
grant id, so that a lease call whose reply its client lost (the client's own
command timeout fired while its event loop was blocked, or the connection
dropped) can be cancelled by a later call and its slice given back. A field
holds the units granted, or "x" once cancelled; a cancel that runs before its
grant leaves "x" and the grant is then refused (claimLeaseGrant). The hash expires with the
window's counter (`expiresAt`, ms since epoch) and is emptied when it names
another window, so it holds one window's grants at most.
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]

-- Records grant `id` in the window whose hash is `key`: the units it reserved, or "x".
-- A hash already naming this window only gains the field (a lease call per slice: one
-- command, not three); one of another window is emptied first, a missing one armed.
local function recordLeaseGrant(key, expiresAt, id, units)
  local current = redis.call('PEXPIRETIME', key)
  if current == expiresAt then
    redis.call('HSET', key, id, units)
    return
  end
  if current ~= -2 then redis.call('DEL', key) end
  redis.call('HSET', key, id, units)
  redis.call('PEXPIREAT', key, expiresAt)
end

-- True when grant `id` was cancelled in that window before it ran.
-- Records grant `id` (a lease call's slice of `units`) unless a cancel got there first (its "x"
-- field, grant ids being unique): false then, and the call must reserve nothing. The cancel check
-- and the record in one HSETNX where the hash names this window (2 commands per lease call, not 4).
local function claimLeaseGrant(key, expiresAt, id, units)
  if redis.call('PEXPIRETIME', key) == expiresAt then
    return redis.call('HSETNX', key, id, units) == 1
  end
  recordLeaseGrant(key, expiresAt, id, units)
  return true
end

local function takeLeaseGrant(key, expiresAt, id)
  if redis.call('PEXPIRETIME', key) ~= expiresAt then return nil end
  local held = redis.call('HGET', key, id)
  if not held then return nil end
  redis.call('HSET', key, id, 'x')
  return tonumber(held) or 0
end

-- Cancels grant `id`, looking in each window's hash in turn (`windows`: a list of
-- { key, expiresAt, windowIndex }, the current window first). Returns the units
-- to give back and their window index (0, -1 when there are none). When no
-- window holds the grant, the current one records the refusal: it has not run.
local function cancelLeaseGrant(id, windows)
  for _, w in ipairs(windows) do
    local units = takeLeaseGrant(w[1], w[2], id)
    if units ~= nil then return units, w[3] end
  end
  local current = windows[1]
  recordLeaseGrant(current[1], current[2], id, 'x')
  return 0, -1
end

--[[
claim-lock.lua (include): take a cache key's loader lock, reading its data version.
claimLock(versionKey, lockKey, waitKey, token, lockTtlMs, flagWaiters) returns
{1, version} when the lock was taken with `token` for lockTtlMs ms, else
{2, version, pttl} (another loader holds it for pttl more ms; with flagWaiters
the waiters flag is set for as long, so that loader's fill publishes a wake-up).
KEYS, ARGV: none read here; the including script passes its keys and values as
arguments (its own header declares KEYS and ARGV).
]]
local function claimLock(versionKey, lockKey, waitKey, token, lockTtlMs, flagWaiters)
  local version = redis.call('GET', versionKey) or '0'
  if redis.call('SET', lockKey, token, 'NX', 'PX', lockTtlMs) then
    return {1, version}
  end
  local pttl = redis.call('PTTL', lockKey)
  if pttl < 0 then pttl = tonumber(lockTtlMs) end
  if flagWaiters then
    redis.call('SET', waitKey, '1', 'PX', pttl)
  end
  return {2, version, pttl}
end

--[[
token-bucket-n.lua: token bucket, a batch of decisions (one limiter key
each), in order, on one Redis TIME (a batch: the decisions of one process's
event-loop poll phase; two decisions of one key take tokens from each other
as two calls in a row would).

A bucket of `burst` tokens refilled continuously at rate = limit / windowMs
tokens per ms (Redis clock); a request takes `cost` tokens or nothing.
The state is one number, the time the bucket is full again (fullAt): the
bucket holds burst - (fullAt - now) x rate tokens at `now` (burst when
fullAt <= now), the token bucket in the one-timestamp form GCRA uses (Brandur
Leach, "Rate Limiting, Cells, and GCRA", 2015). Taking c tokens moves fullAt
to max(fullAt, now) + c / rate. If the Redis clock steps back, the bucket
holds fewer tokens, never more. A missing key is a full bucket, so the key
expires (PX) at fullAt; a bucket that lost its TTL is re-armed. A bucket
written by an earlier version as HASH { tokens, ts } is read and replaced
on the next admission. Admitted units over any interval of d ms: at most
burst + limit x d / windowMs.

KEYS[1] ..  the keys of decision 1, then of decision 2, and so on; decision i's:
KEYS[i]    decision i's bucket: STRING fullAt (ms since epoch, a decimal number)
ARGV[1]    limit: tokens refilled per window (integer >= 1)
ARGV[2]    windowMs: refill window (ms, integer >= 1)
ARGV[3]    burst: bucket capacity (tokens, integer >= 1)
ARGV[3+i]  decision i's cost: tokens the request takes (integer >= 1)

Returns: a flat array of integers: [1] nowMs, the Redis TIME of every decision
(ms since epoch), then 4 per decision, decision i at 4i-2 .. 4i+1:
  allowed: 1 admitted (tokens taken), 0 rejected (nothing taken)
  remaining: whole tokens left after the decision
  resetAtMs: when the bucket is full again (ms since epoch)
  retryAfterMs: 0 if admitted; ms until `cost` tokens are there; -1 if cost > burst
]]
--- @include "../../redis/lua/includes/now-ms"
--- @include "includes/token-bucket-state"
--- @include "includes/decide-each"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now = redisNowMs()
local rate = limit / window

local function decide(k, cost)
  local key = KEYS[k]
  local fullAt, stored = tokenBucketFullAt(key, now, burst, rate)
  local tokens = burst - (fullAt - now) * rate
  if cost > burst or tokens < cost - 1e-9 then
    if stored and redis.call('PTTL', key) == -1 then
      redis.call('PEXPIRE', key, math.max(1, math.ceil(fullAt - now)))
    end
    local retryAfter = -1
    if cost <= burst then
      retryAfter = math.max(1, math.ceil((cost - tokens) / rate - 1e-9))
    end
    return 0, math.max(0, math.floor(tokens + 1e-9)), math.ceil(fullAt), retryAfter
  end
  fullAt = fullAt + cost / rate
  -- a Lua number argument is written in its shortest round-trip form (exact, no string.format)
  redis.call('SET', key, fullAt, 'PX', math.max(1, math.ceil(fullAt - now)))
  return 1, math.max(0, math.floor(burst - (fullAt - now) * rate + 1e-9)), math.ceil(fullAt), 0
end

return decideEach(KEYS, ARGV, 1, 4, now, decide)

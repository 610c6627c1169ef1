--[[
trim-1.lua: trim a consumer-group stream below the oldest entry that any
group still needs, and report its lag. An entry is still needed while it is
pending (delivered, not acknowledged) or not yet delivered to some group, so
the threshold is, over all groups, the oldest pending id, or the group's
last-delivered-id when nothing is pending. XTRIM MINID removes only ids
strictly below the threshold: a pending entry is never trimmed. Streams with
no group are not trimmed.

KEYS[1]  the stream

ARGV[1]  the group whose lag is reported

Returns: { trimmed (entries removed),
           length (XLEN after trimming),
           pending (entries pending in ARGV[1]'s group),
           oldest pending id of that group, or '' when none,
           first undelivered id of that group, or '' when none,
           now (Redis TIME, ms),
           undelivered (entries not yet delivered to that group: XINFO's lag when Redis knows it,
                        else 1 when at least one exists, 0 when none),
           last id (the id of the stream's last entry, '' when empty or missing; only when the
                    stream is idle: nothing pending or undelivered, at most one entry left;
                    else '') }
The caller may then skip this script on the stream until its last entry changes (an XREVRANGE
… COUNT 1 probe), since nothing can become pending or trimmable without a new entry.
]]
--- @include "../../redis/lua/includes/now-ms"
local nowMs = redisNowMs()
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { 0, 0, 0, '', '', nowMs, 0, '' }
end

local function parse(id)
  local dash = string.find(id, '-', 1, true)
  return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
end
local function less(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  return am < bm or (am == bm and as < bs)
end

local threshold = nil
local pending, oldest, firstUndelivered, undelivered = 0, '', '', 0
local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
for _, group in ipairs(groups) do
  local name, last, lag
  for i = 1, #group, 2 do
    if group[i] == 'name' then name = group[i + 1] end
    if group[i] == 'last-delivered-id' then last = group[i + 1] end
    if group[i] == 'lag' then lag = group[i + 1] end
  end
  local summary = redis.call('XPENDING', KEYS[1], name)
  local needed = last
  if summary[1] > 0 then needed = summary[2] end
  if threshold == nil or less(needed, threshold) then threshold = needed end
  if name == ARGV[1] then
    pending = summary[1]
    if summary[1] > 0 then oldest = summary[2] end
    local next = redis.call('XRANGE', KEYS[1], '(' .. last, '+', 'COUNT', 1)
    if #next > 0 then
      firstUndelivered = next[1][1]
      undelivered = 1
      if type(lag) == 'number' and lag > 0 then undelivered = lag end
    end
  end
end

local trimmed = 0
if threshold ~= nil and threshold ~= '0-0' then
  trimmed = redis.call('XTRIM', KEYS[1], 'MINID', threshold)
end
local length = redis.call('XLEN', KEYS[1])
local lastId = ''
if pending == 0 and undelivered == 0 and length == 1 then
  lastId = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1][1]
end
return { trimmed, length, pending, oldest, firstUndelivered, nowMs, undelivered, lastId }

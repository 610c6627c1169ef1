--[[
drop-drained-stream-1.lua: deletes a stream of the legacy interaction layout once every consumer
group on it has read and acknowledged every entry, in one step, so an entry appended meanwhile
(by an instance of the previous version still running) keeps the stream alive and is not lost.

KEYS[1]  the legacy partition's event STREAM (…:ix:{ix:<p>}:stream)

Returns: { code, pending, undelivered }
  code 1 deleted; 0 kept (entries pending or not yet delivered to some group, or no group read it
  at all while it holds entries); -1 the stream does not exist.
  pending: entries pending over all groups; undelivered: 1 if some group has not been delivered
  the stream's last entry, else 0 (both 0 when deleted or missing).
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { -1, 0, 0 }
end

local function field(flat, name)
  for i = 1, #flat, 2 do
    if flat[i] == name then return flat[i + 1] end
  end
  return nil
end

local info = redis.call('XINFO', 'STREAM', KEYS[1])
local length = field(info, 'length')
local lastId = field(info, 'last-generated-id')
local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
if #groups == 0 and length > 0 then
  return { 0, 0, 1 }
end

local pending = 0
local undelivered = 0
for _, group in ipairs(groups) do
  pending = pending + field(group, 'pending')
  if length > 0 and field(group, 'last-delivered-id') ~= lastId then undelivered = 1 end
end
if pending > 0 or undelivered > 0 then
  return { 0, pending, undelivered }
end
redis.call('UNLINK', KEYS[1])
return { 1, 0, 0 }

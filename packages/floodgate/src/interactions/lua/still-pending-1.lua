--[[
still-pending-1.lua: which entries of a batch are no longer pending in a consumer group (on any
consumer): acknowledged by another consumer, or lost with Redis's data. Read-only: one
XPENDING range scan over the batch's id range, paged, instead of claiming every entry (XCLAIM
writes and propagates one command per id).

KEYS[1]  the stream

ARGV[1]  the group
ARGV[2]  the batch's smallest id in this stream
ARGV[3]  its greatest id
ARGV[4]  page size (entries per XPENDING call)
ARGV[5…] the batch's ids in this stream

Returns: the ids of ARGV[5…] that are not pending, {} when all are; all of them when the stream
         or the group does not exist (NOGROUP).
]]
local pending = {}
local from = ARGV[2]
local page = tonumber(ARGV[4])
while true do
  local reply = redis.pcall('XPENDING', KEYS[1], ARGV[1], from, ARGV[3], page)
  if type(reply) == 'table' and reply.err then
    if string.find(reply.err, 'NOGROUP', 1, true) then break end
    return redis.error_reply(reply.err)
  end
  for _, entry in ipairs(reply) do
    pending[entry[1]] = true
  end
  if #reply < page then break end
  -- exclusive start: the next page begins after the last id seen
  from = '(' .. reply[#reply][1]
end
local gone = {}
for i = 5, #ARGV do
  if not pending[ARGV[i]] then gone[#gone + 1] = ARGV[i] end
end
return gone

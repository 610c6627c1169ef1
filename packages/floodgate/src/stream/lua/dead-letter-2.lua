--[[
dead-letter-2.lua: move one pending entry to the dead-letter stream with the
error that made it fail, and acknowledge it, atomically (a crash can neither
lose it nor dead-letter it twice). Does nothing if the entry is no longer
pending in the group (someone else applied or dead-lettered it meanwhile).

KEYS[1]  the source stream
KEYS[2]  the dead-letter stream (same hash tag)

ARGV[1]  consumer group
ARGV[2]  id of the entry
ARGV[3]  error message
ARGV[4]  delivery count when it was given up
ARGV[5]  name of the consumer giving up

Returns: 1 when moved, 0 when the entry was not pending.
The dead letter holds the original fields (if the entry still exists) plus
_id, _stream, _error, _deliveries, _consumer.
]]
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if #pending == 0 then
  return 0
end
local fields = {}
local entry = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
if #entry > 0 then
  for _, value in ipairs(entry[1][2]) do fields[#fields + 1] = value end
end
for _, value in ipairs({ '_id', ARGV[2], '_stream', KEYS[1], '_error', ARGV[3], '_deliveries', ARGV[4],
  '_consumer', ARGV[5] }) do
  fields[#fields + 1] = value
end
redis.call('XADD', KEYS[2], '*', unpack(fields))
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return 1

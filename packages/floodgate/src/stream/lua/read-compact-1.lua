--[[
read-compact-1.lua: XREADGROUP of up to ARGV[3] new entries ('>') of one stream for one consumer,
each entry returned as ONE string, its id and fields joined by NUL bytes, instead of the nested
array of one bulk string per id, field and value XREADGROUP replies with: the client decodes one
reply item per entry, not 2 + 2 per field. Same effect on the group as the plain read (the
entries become pending to the consumer, delivered once).

KEYS[1]  the stream

ARGV[1]  consumer group
ARGV[2]  consumer name
ARGV[3]  count (entries at most)

Returns: one item per entry read, in stream order: "<id>\0<field>\0<value>\0…"; an entry whose
         fields hold a NUL byte themselves as XREADGROUP gives it, {id, {field, value, …}}; {}
         when there is nothing new. Errors as XREADGROUP's (NOGROUP).
]]
local reply = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[3], 'STREAMS', KEYS[1], '>')
local out = {}
if not reply then
  return out
end
local find = string.find
local concat = table.concat
for i, item in ipairs(reply[1][2]) do
  local fields = item[2]
  -- a field holding a NUL would shift the client's split: such an entry goes as XREADGROUP gives it
  local plain = true
  for j = 1, #fields do
    if find(fields[j], '\0', 1, true) then
      plain = false
      break
    end
  end
  out[i] = plain and (item[1] .. '\0' .. concat(fields, '\0')) or item
end
return out

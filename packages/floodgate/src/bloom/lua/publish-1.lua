--[[
publish-1.lua: switches a Bloom filter to a freshly built generation, atomically.

KEYS[1]  meta hash of the filter: fields `ready` (generation served),
         `building` (generation being rebuilt), `seq` (last generation number)
ARGV[1]  generation that finished building
ARGV[2]  channel of the filter's announcements: "g <generation>" is published
         there on a switch, so replicas reload

Returns: the generation served before (integer, 0 if none) when the switch
         happened; -1 when `building` is no longer ARGV[1] (nothing changed).
]]
if redis.call('HGET', KEYS[1], 'building') ~= ARGV[1] then
  return -1
end
local previous = tonumber(redis.call('HGET', KEYS[1], 'ready') or '0')
redis.call('HSET', KEYS[1], 'ready', ARGV[1])
redis.call('HDEL', KEYS[1], 'building')
redis.call('PUBLISH', ARGV[2], 'g ' .. ARGV[1])
return previous

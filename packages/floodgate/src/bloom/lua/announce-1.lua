--[[
announce-1.lua: announces items whose bits an add has just written: numbers the add in the
filter's add sequence and publishes it to the filter's replicas. Run only
after the bits are set, so every add numbered <= a sequence read from the
meta hash is in the bits of the generation that was `ready` then.

KEYS[1]  meta hash of the filter (field `addseq`: last add number)
ARGV[1]  channel of the filter's announcements
ARGV[2]  the added items, as a JSON array of strings

Returns: the add's sequence number (integer >= 1). Publishes "<seq> <ARGV[2]>".
]]
local seq = redis.call('HINCRBY', KEYS[1], 'addseq', 1)
redis.call('PUBLISH', ARGV[1], seq .. ' ' .. ARGV[2])
return seq

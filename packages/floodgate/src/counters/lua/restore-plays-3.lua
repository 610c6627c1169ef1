--[[
restore-plays-3.lua: puts an item's play count from PostgreSQL back into its Redis
counter and its all-time plays ranking score, in one step; not for a forgotten item (its
tombstone KEYS[3] exists: a deleted video, Interactions.forget): 0, nothing written.

KEYS[1]  play counter STRING of the item (…:ix:{<tag>}:plays:<itemId>)
KEYS[2]  all-time plays ranking ZSET of the partition (…:rank:{<tag>}:all:plays)
KEYS[3]  the item's tombstone STRING (…:ix:{<tag>}:gone:<itemId>)
ARGV[1]  ranking member: the item id zero-padded to 20 digits
ARGV[2]  the play count in PostgreSQL (integer >= 0)
ARGV[3]  K: entries kept in the ranking ZSET (integer >= 1)
ARGV[4]  mode: 'merge' = counter becomes max(counter, ARGV[2]) (idempotent; plays counted
         since the loss raise it, never lower it), 'replace' = counter becomes ARGV[2]

A counter of 0 removes the item from the ranking ZSET.
Returns: the counter after the step (integer; 0 for a forgotten item).
]]
--- @include "includes/all-time-score"
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local db = tonumber(ARGV[2])
local value = db
if ARGV[4] == 'merge' then
  local current = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
  if current > db then value = current end
end
redis.call('SET', KEYS[1], value)
setAllTimeScore(KEYS[2], ARGV[1], value, tonumber(ARGV[3]))
return value

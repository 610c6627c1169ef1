--[[
restore-members-3.lua: puts an item's members read from PostgreSQL back into its
like (or favourite) SET after Redis lost its data (or on an admin repair), and
sets the item's all-time ranking score to the SCARD that results, in one step
so a concurrent toggle (toggle-4.lua) cannot interleave.

An item is restored at most once per recovery ('merge'): the first restore
(bulk rebuild, or on demand right before a toggle) records a marker; later
ones change nothing. Otherwise a restore from a database that has not yet
applied a toggle made after the first restore (an unlike still in the stream)
would put that member back and silently undo the unlike.

KEYS[1]  SET of user ids of one item (…:ix:{<tag>}:likes:<itemId> or …:favorites:<itemId>)
KEYS[2]  all-time ranking ZSET of the partition (…:rank:{<tag>}:all:likes); untouched when ARGV[3] = '0'
KEYS[3]  restore markers HASH of the partition (…:ix:{<tag>}:restored), field ARGV[5]
ARGV[1]  ranking member: the item id zero-padded to 20 digits
ARGV[2]  K: entries kept in the ranking ZSET (integer >= 1)
ARGV[3]  '1' update the ranking (likes), '0' do not (favourites)
ARGV[4]  mode: 'merge' = if the marker is absent: SADD (never drops a membership added since the
         loss), set the marker; if present: nothing. 'replace' = DEL the set, SADD (admin repair on
         a drained stream; markers ignored)
ARGV[5]  marker field, '<kind>:<itemId>'
ARGV[6]  marker TTL (ms), re-armed on every new marker (markers outlive the rebuild; a new loss clears them)
ARGV[7..] user ids to add (may be none: the marker alone is recorded)

Returns: { restored (1 the members were added, 0 the item was already restored), SCARD after the step }
]]
--- @include "includes/all-time-score"
if ARGV[4] == 'merge' then
  if redis.call('HSETNX', KEYS[3], ARGV[5], '1') == 0 then
    return { 0, redis.call('SCARD', KEYS[1]) }
  end
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
else
  redis.call('DEL', KEYS[1])
end
for i = 7, #ARGV, 1000 do
  redis.call('SADD', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
local count = redis.call('SCARD', KEYS[1])
if ARGV[3] == '1' then
  setAllTimeScore(KEYS[2], ARGV[1], count, tonumber(ARGV[2]))
end
return { 1, count }

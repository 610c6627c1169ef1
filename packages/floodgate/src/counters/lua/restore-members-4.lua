--[[
restore-members-4.lua: puts one chunk of an item's members read from PostgreSQL back into its
like (or favourite) buckets after Redis lost its data (or on an admin repair), and sets the
item's all-time ranking score to the count that results, in one step so a concurrent toggle
(toggle-5.lua) cannot interleave with the chunk. A big item is restored in several calls of at
most 250 members each (MEMBER_BUCKET_DEFAULTS.maxMembersPerStep), so no call runs long.

An item is restored at most once per recovery ('merge'): the call carrying the item's LAST chunk
records a marker; any call that finds the marker changes nothing. A toggle runs only after its
instance saw the marker (CountsRecovery.restoreItem), so a chunk arriving after that toggle (a
slower concurrent restore) is refused and cannot put back a member the toggle removed from a
database that has not applied the unlike yet. Chunks before the marker only add DB members
(SADD: never drops a membership added since the loss); two restorers adding the same members
concurrently is harmless. A forgotten item (its tombstone KEYS[4] exists: a deleted video,
Interactions.forget) is not restored, in any mode: { 0, 0 }, nothing written.

KEYS[1]  base key of the item's members of one kind (…:ix:{<tag>}:likes:<itemId> or …:favorites:<itemId>):
         bucket 0, and the prefix of the item's other buckets (KEYS[1] .. ':' .. i) and of its meta
         HASH (KEYS[1] .. ':m'), same hash tag (see ../../interactions/lua/includes/member-buckets.lua)
KEYS[2]  all-time ranking ZSET of the partition (…:rank:{<tag>}:all:likes); untouched when ARGV[3] = '0'
KEYS[3]  restore markers HASH of the partition (…:ix:{<tag>}:restored), field ARGV[5]
KEYS[4]  the item's tombstone STRING (…:ix:{<tag>}:gone:<itemId>)
ARGV[1]  ranking member: the item id zero-padded to 20 digits
ARGV[2]  K: entries kept in the ranking ZSET (integer >= 1)
ARGV[3]  '1' update the ranking (likes), '0' do not (favourites)
ARGV[4]  mode: 'merge' = the item's last (or only) chunk: if the marker is absent, add the members
         and set the marker; if present, nothing. 'merge-part' = a chunk before the last: if the
         marker is absent, add the members (no marker); if present, nothing. 'replace' = delete the
         item's buckets and meta, then add (admin repair on a drained stream; markers ignored; the
         caller drops a big item's buckets in bounded steps first). 'add' = add, markers ignored
         (a later chunk of a 'replace').
ARGV[5]  marker field, '<kind>:<itemId>'
ARGV[6]  marker TTL (ms), re-armed on every new marker (markers outlive the rebuild; a new loss clears them)
ARGV[7]  bucket load: members per bucket on average before a split (integer >= 1)
ARGV[8..] user ids to add (may be none: with 'merge', the marker alone is recorded)

Returns: { restored (1 the members were added, 0 the item was already restored or is forgotten),
           count after the step (0 when forgotten) }
]]
--- @include "includes/all-time-score"
--- @include "../../interactions/lua/includes/member-buckets"
if redis.call('EXISTS', KEYS[4]) == 1 then return { 0, 0 } end
local mode = ARGV[4]
if mode == 'merge' or mode == 'merge-part' then
  if redis.call('HEXISTS', KEYS[3], ARGV[5]) == 1 then
    return { 0, memberCount(KEYS[1]) }
  end
  if mode == 'merge' then
    redis.call('HSET', KEYS[3], ARGV[5], '1')
    redis.call('PEXPIRE', KEYS[3], ARGV[6])
  end
elseif mode == 'replace' then
  local g = redis.call('HMGET', KEYS[1] .. ':m', 'l', 's')
  if g[1] then
    for i = 2 ^ tonumber(g[1]) + tonumber(g[2]) - 1, 1, -1 do
      redis.call('UNLINK', bucketKey(KEYS[1], i))
    end
  end
  redis.call('UNLINK', KEYS[1], KEYS[1] .. ':m')
elseif mode ~= 'add' then
  return redis.error_reply('ERR restore-members-3.lua: unknown mode ' .. tostring(mode))
end
local count = addMembers(KEYS[1], ARGV, 8, tonumber(ARGV[7]))
if ARGV[3] == '1' then
  setAllTimeScore(KEYS[2], ARGV[1], count, tonumber(ARGV[2]))
end
return { 1, count }

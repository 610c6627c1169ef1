--[[
restore-members: puts members read from PostgreSQL back into a video's like
(or favourite) SET after Redis lost its data (or on an admin repair), and sets
the video's all-time ranking score to the SCARD that results, in one step so
a concurrent toggle (E1's toggle-4.lua) cannot interleave between the two.

KEYS[1]  SET of user ids of one video (…:ix:{ix:<p>}:likes:<videoId> or …:favorites:<videoId>)
KEYS[2]  all-time ranking ZSET of the partition (…:rank:{ix:<p>}:all:likes); untouched when ARGV[3] = '0'
ARGV[1]  ranking member: the video id zero-padded to 20 digits
ARGV[2]  K: entries kept in the ranking ZSET (integer >= 1)
ARGV[3]  '1' update the ranking (likes), '0' do not (favourites)
ARGV[4]  mode: 'merge' = SADD only (never drops a membership added since the loss),
         'replace' = DEL the set first (admin repair on a drained stream; the
         caller sends 'replace' only for the first chunk of a video)
ARGV[5..] user ids to add (at least one)

Returns: the SCARD after the step (integer).
]]
if ARGV[4] == 'replace' then
  redis.call('DEL', KEYS[1])
end
for i = 5, #ARGV, 1000 do
  redis.call('SADD', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
local count = redis.call('SCARD', KEYS[1])
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[2], count, ARGV[1])
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[2]) + 1))
end
return count

--[[
member-flags-2.lua: whether one user likes and has favourited one item, read-only: each
membership is one SISMEMBER on the bucket the user's id hashes to under the item's current
bucket geometry (includes/member-buckets.lua), so the answer is exact in one round trip, and
it fits in the counts read's pipeline.

KEYS[1]  base key of the item's likes (…:ix:{<tag>}:likes:<itemId>): bucket 0, and the prefix
         of its other buckets (KEYS[1] .. ':' .. i) and its meta HASH (KEYS[1] .. ':m')
KEYS[2]  base key of the item's favourites (…:ix:{<tag>}:favorites:<itemId>), the same way
ARGV[1]  user id (decimal string)

Returns: { liked (1/0), favorited (1/0) }
]]
--- @include "includes/member-buckets"
return { isMember(KEYS[1], ARGV[1]), isMember(KEYS[2], ARGV[1]) }

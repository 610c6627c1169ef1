-- Releases the older design's per-key load lock only if this loader still owns it
-- (compare-and-delete, so a loader whose lock expired cannot delete the next owner's lock).
-- KEYS[1]: the lock key (<prefix>:legacy:{<key>}:lock)
-- ARGV[1]: the loader's token (random hex) it was taken with
-- returns: 1 if the lock was deleted, 0 if it was missing or held by another token
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0

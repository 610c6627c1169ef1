/** Defaults of a {@link BloomFilter}'s rebuild (`BloomFilterOptions`), in one place. */
export const BLOOM_REBUILD_DEFAULTS = {
  /**
   * Longest run (ms) of a rebuild's CPU work (hashing the source's ids, encoding the writes) before
   * the event loop gets a turn: requests on the rebuilding process wait behind one run, not a whole
   * chunk of the source (300,000 ids hashed in one go held the loop 143–152 ms on a 2-core box;
   * video-api's 5,000-id pages take 2–7 ms each).
   */
  sliceMs: 5,
} as const

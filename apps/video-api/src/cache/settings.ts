/**
 * Settings of the service's read cache (from `CACHE_*`, `FEED_CACHE_TTL_MS`, `BLOOM_*`). Units in the
 * names. Unset = the field table's default (`defaultVideoCacheSettings` in from_config.ts).
 */
export interface VideoCacheSettings {
  /** L2 TTL range of a video (ms), drawn uniformly per write. @default { minMs: 300_000, maxMs: 600_000 } */
  ttlMs?: { minMs: number; maxMs: number }
  /** TTL of a "no such video" entry (ms). @default 60_000 */
  negativeTtlMs?: number
  /** Stale-while-revalidate grace after a video's logical expiry (ms). @default 60_000 */
  staleWhileRevalidateMs?: number
  /** Per-key mutex TTL (ms). @default 5_000 */
  lockTtlMs?: number
  /** Longest wait for another instance's load (ms). @default 2_000 */
  lockWaitMs?: number
  /** Idle event-loop time (ms) each Redis call of the read path gets (floodgate `withinDeadline`). @default 50 */
  redisTimeoutMs?: number
  /** Longest wall-clock wait (ms) of each Redis call of the read path, however busy the process. @default 2_000 */
  redisMaxWaitMs?: number
  /** In-process L1 TTL (ms); with `l1Tracking` established, only of entries read untracked. @default 10_000 */
  l1TtlMs?: number
  /**
   * Keep the video cache's L1 entries until Redis invalidates them (floodgate `ClientTracking`
   * on two more connections, closed with the cache), at most floodgate's `l1.trackedMaxAgeMs`. @default true
   */
  l1Tracking?: boolean
  /**
   * In-process L1 capacity of the video cache (entries): a safety bound, set high so the byte
   * bound decides (a 10k-entry L1 held ~12% of a 100k catalog and sent the rest to Redis). @default 200_000
   */
  l1MaxEntries?: number
  /** In-process L1 capacity of the video cache (bytes, entries weighed by encoded length). @default 67_108_864 (64 MiB) */
  l1MaxBytes?: number
  /** Fixed TTL of the recommendation feed (ms); invalidated on publish, update and delete. @default 300_000 */
  feedTtlMs?: number
  /** Bloom filter size (bits). @default 10_000_000 */
  bloomBits?: number
  /** Bloom filter hash functions. @default 7 */
  bloomHashes?: number
  /**
   * Rebuild the Bloom filter from the database in the background at start, and again whenever a
   * query finds it missing (Redis lost its data). @default true
   */
  rebuildBloomAtStart?: boolean
  /** Per-command Redis timeout (ms) of Bloom rebuilds, on their own connection. @default 5_000 */
  bloomRebuildTimeoutMs?: number
  /**
   * Wait (ms) after the first failed Bloom rebuild at start (or after a failed add); doubles after
   * each failed attempt, up to `bloomRebuildRetryMaxMs`, with equal jitter (drawn in [d/2, d]).
   * Attempts are unbounded: the loop ends when a rebuild succeeds or the app closes. @default 1_000
   */
  bloomRebuildRetryBaseMs?: number
  /** Cap of the wait between Bloom rebuild attempts (ms). @default 60_000 */
  bloomRebuildRetryMaxMs?: number
}

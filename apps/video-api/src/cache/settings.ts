/**
 * Settings of the service's read cache (from `CACHE_*`, `FEED_CACHE_TTL_MS`, `BLOOM_*`). Units in the
 * names. Unset = the field table's default (`defaultVideoCacheSettings` in from_config.ts).
 */
export interface VideoCacheSettings {
  /** L2 TTL range of a video (ms), drawn uniformly per write. @default the field table's `CACHE_TTL_MIN_MS`, `CACHE_TTL_MAX_MS` */
  ttlMs?: { minMs: number; maxMs: number }
  /** TTL of a "no such video" entry (ms). @default the field table's `CACHE_NEGATIVE_TTL_MS` */
  negativeTtlMs?: number
  /** Stale-while-revalidate grace after a video's logical expiry (ms). @default the field table's `CACHE_STALE_WHILE_REVALIDATE_MS` */
  staleWhileRevalidateMs?: number
  /** Per-key mutex TTL (ms). @default the field table's `CACHE_LOCK_TTL_MS` */
  lockTtlMs?: number
  /** Longest wait for another instance's load (ms). @default the field table's `CACHE_LOCK_WAIT_MS` */
  lockWaitMs?: number
  /** Idle event-loop time (ms) each Redis call of the read path gets (floodgate `withinDeadline`). @default the field table's `REDIS_COMMAND_TIMEOUT_MS` */
  redisTimeoutMs?: number
  /** Longest wall-clock wait (ms) of each Redis call of the read path, however busy the process. @default the field table's `REDIS_MAX_WAIT_MS` */
  redisMaxWaitMs?: number
  /** In-process L1 TTL (ms); with `l1Tracking` established, only of entries read untracked. @default the field table's `CACHE_L1_TTL_MS` */
  l1TtlMs?: number
  /**
   * Keep the video cache's L1 entries until Redis invalidates them (floodgate `ClientTracking`:
   * the app's pair, shared with the live counts, or the cache's own when installed without one),
   * at most floodgate's `l1.trackedMaxAgeMs`. @default the field table's `CACHE_L1_TRACKING`
   */
  l1Tracking?: boolean
  /**
   * In-process L1 capacity of the video cache (entries): a safety bound, set high so the byte
   * bound (`l1MaxBytes`) decides. @default the field table's `CACHE_L1_MAX_ENTRIES`
   */
  l1MaxEntries?: number
  /** In-process L1 capacity of the video cache (bytes, entries weighed by encoded length). @default the field table's `CACHE_L1_MAX_BYTES` */
  l1MaxBytes?: number
  /** Fixed TTL of the recommendation feed (ms); invalidated on publish, update and delete. @default the field table's `FEED_CACHE_TTL_MS` */
  feedTtlMs?: number
  /** Bloom filter size (bits). @default the field table's `BLOOM_BITS` */
  bloomBits?: number
  /** Bloom filter hash functions. @default the field table's `BLOOM_HASHES` */
  bloomHashes?: number
  /**
   * Rebuild the Bloom filter from the database in the background at start, and again whenever a
   * query finds it missing (Redis lost its data). @default `defaultVideoCacheSettings`
   */
  rebuildBloomAtStart?: boolean
  /** Per-command Redis timeout (ms) of Bloom rebuilds, on their own connection. @default `defaultVideoCacheSettings` */
  bloomRebuildTimeoutMs?: number
  /**
   * Wait (ms) after the first failed Bloom rebuild at start (or after a failed add); doubles after
   * each failed attempt, up to `bloomRebuildRetryMaxMs`, with equal jitter (drawn in [d/2, d]).
   * Attempts are unbounded: the loop ends when a rebuild succeeds or the app closes. @default the field table's `BLOOM_REBUILD_RETRY_BASE_MS`
   */
  bloomRebuildRetryBaseMs?: number
  /** Cap of the wait between Bloom rebuild attempts (ms). @default the field table's `BLOOM_REBUILD_RETRY_MAX_MS` */
  bloomRebuildRetryMaxMs?: number
}

import type { CountsUnavailableReason, ItemCounts } from './read_counts.js'

/** Counts of one item as {@link LiveCounts} serves them. */
export interface LiveItemCounts extends ItemCounts {
  /** Where the counts came from: a Redis read, or the fallback while Redis could not answer. */
  source: 'redis' | 'fallback'
  /** When they were read (ms epoch: a Redis read's send time, a fallback's answer time). */
  fetchedAtMs: number
  /**
   * True unless they come from a Redis read less than `maxAgeMs` old, or from a tracked read Redis
   * has not invalidated since.
   */
  stale: boolean
}

/** The answer of {@link LiveCounts.read}: ids nobody could answer for are absent. */
export interface LiveCountsRead {
  counts: Map<string, LiveItemCounts>
  /** Set when this call's Redis read failed. */
  unavailable?: CountsUnavailableReason
}

/** What {@link LiveCounts} did since it was made (each field counts ids unless it says calls). */
export interface LiveCountsStats {
  /** Ids answered in process, without a round trip. */
  localHits: number
  /** Redis reads sent (calls). */
  redisBatches: number
  /** Ids those reads asked for. */
  redisIds: number
  /** Redis reads that failed (calls). */
  redisFailures: number
  /** Fallback calls. */
  fallbackLoads: number
  /** Ids those calls asked for. */
  fallbackIds: number
  /** Ids served stale. */
  staleServes: number
  /** Of `localHits`, ids answered because Redis tracks them (no age bound). */
  trackedHits: number
  /** Ids whose entry an invalidation from Redis made outdated (read again on the next request). */
  invalidations: number
  /** Times every tracked entry was dropped at once (tracking lost, flush-all, epoch marker changed). */
  trackingFlushes: number
}

/** All zero. */
export function emptyLiveCountsStats(): LiveCountsStats {
  return {
    localHits: 0,
    redisBatches: 0,
    redisIds: 0,
    redisFailures: 0,
    fallbackLoads: 0,
    fallbackIds: 0,
    staleServes: 0,
    trackedHits: 0,
    invalidations: 0,
    trackingFlushes: 0,
  }
}

/** One item kept in process by {@link LiveCounts}. */
export interface LiveCountsEntry {
  likes: number
  favorites: number
  plays: number
  source: 'redis' | 'fallback'
  fetchedAtMs: number
  /** Last time Redis was asked for it (ms), answered or not: no new read before `maxAgeMs` after. */
  checkedAtMs: number
  /** The tracking generation it was read in, 0 when not tracked: valid while that generation lasts. */
  trackedGen: number
  /** Redis said it changed since it was read (kept only to be served stale while Redis is down). */
  changed: boolean
  /** The last Redis read of it failed (at `checkedAtMs`): Redis is not asked again for `maxAgeMs`. */
  failed: boolean
}

import type { ClientTracking } from '../tracking/index.js'
import { integerIn } from '../validation/index.js'
import type { CountsReader } from './read_counts.js'

/** Counts (and, for a viewer, that viewer's flags) a {@link CountsFallback} found for one item. */
export interface FallbackCounts {
  likes: number
  favorites: number
  plays: number
  /** Present when the fallback was called with a viewer. */
  liked?: boolean
  /** Present when the fallback was called with a viewer. */
  favorited?: boolean
}

/**
 * Where counts come from when Redis cannot answer (video-api: the PostgreSQL count columns and
 * the viewer's rows, one query). Keyed by canonical id; ids it does not know are left out.
 * `undefined` (or a rejection) when it fails too.
 */
export type CountsFallback = (
  itemIds: readonly string[],
  viewerUserId: string | undefined,
) => Promise<Map<string, FallbackCounts> | undefined>

/** Options of {@link LiveCounts}. */
export interface LiveCountsOptions {
  /** The Redis read (one pipelined round trip, epoch check, recovery view, deadline). */
  reader: CountsReader
  /** Called for ids with no usable counts while Redis cannot answer. */
  fallback: CountsFallback
  /**
   * Freshness bound (ms): anonymous reads are answered in process from counts read at most this
   * long ago; older entries are read again from Redis (one batch). Also how long a fallback answer
   * is kept, so the fallback is asked at most once per item per `maxAgeMs` per process.
   * @default 1_000 — a count a second old is live enough for a page view, and 1,000 concurrent
   *   views of one item then cost one Redis read per second per process instead of 1,000.
   */
  maxAgeMs?: number
  /**
   * While Redis cannot answer, counts read from Redis at most this long ago (ms) are served,
   * marked stale, instead of asking the fallback. Redis down means no interaction is written
   * and nothing is flushed, so the last Redis counts stay the best answer for a while.
   * @default 60_000
   */
  maxStaleMs?: number
  /** Most items kept in process. @default 100_000 */
  maxEntries?: number
  /** Most bytes kept in process (each entry weighed by {@link liveCountsEntryBytes}). @default 16_777_216 (16 MiB) */
  maxBytes?: number
  /** Clock (ms); tests pass their own. @default Date.now */
  now?: () => number
  /**
   * Server-assisted caching on the reader's Redis (made on the same client as the reader's). While
   * it is established, counts are read on its tracked connection and served in process until Redis
   * invalidates them, with no age bound; `maxAgeMs` applies only while it is not (not yet
   * connected, lost, a cluster). The caller owns it (and closes it).
   * @default none (the `maxAgeMs` bound only)
   */
  tracking?: ClientTracking
}

/** The defaults of {@link LiveCountsOptions}, in one place. */
export const LIVE_COUNTS_DEFAULTS = {
  maxAgeMs: 1_000,
  maxStaleMs: 60_000,
  maxEntries: 100_000,
  maxBytes: 16_777_216,
} as const

export type ResolvedLiveCountsOptions = Required<
  Pick<LiveCountsOptions, 'maxAgeMs' | 'maxStaleMs' | 'maxEntries' | 'maxBytes' | 'now'>
>

/**
 * Estimated heap bytes of one entry: the entry object (6 fields), the LRU's slots for it and the
 * id string. Measured (heapUsed over 200,000 entries): 165 B with 6-digit ids, 181 B with 18-digit
 * ids; this estimate is 164 B and 188 B.
 */
export function liveCountsEntryBytes(itemId: string): number {
  return 152 + 2 * itemId.length
}

/**
 * Defaults applied and numbers checked.
 * @throws {InvalidArgumentError} for a bound that is not an integer in range.
 */
export function resolveLiveCountsOptions(options: LiveCountsOptions): ResolvedLiveCountsOptions {
  const d = LIVE_COUNTS_DEFAULTS
  const maxAgeMs = integerIn('maxAgeMs', options.maxAgeMs ?? d.maxAgeMs, 1, 3_600_000)
  return {
    maxAgeMs,
    maxStaleMs: integerIn('maxStaleMs', options.maxStaleMs ?? d.maxStaleMs, maxAgeMs, 86_400_000),
    maxEntries: integerIn('maxEntries', options.maxEntries ?? d.maxEntries, 1, 100_000_000),
    maxBytes: integerIn('maxBytes', options.maxBytes ?? d.maxBytes, 1_024, 2 ** 40),
    now: options.now ?? Date.now,
  }
}

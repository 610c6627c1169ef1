import { Singleflight } from '../cache/singleflight.js'
import type { InteractionKeys } from '../interactions/keys.js'
import type { RedisClient } from '../redis/index.js'
import { integerIn } from '../validation/index.js'
import { readAllTimeTops } from './all_time.js'
import { mergeTops } from './merge.js'
import { assertQuery, type ResolvedWindow, resolveRankingsLayout, windowOf } from './options.js'
import type { RankedItem, RankingMetric, Rankings, TopQuery, WindowSpec } from './types.js'
import { WindowCache, type WindowCacheStats } from './window_cache.js'

/** Options of {@link createRankings}. */
export interface RankingsOptions {
  /** Single-node or cluster client. */
  redis: RedisClient
  /** Key prefix (the service's REDIS_PREFIX, e.g. `va`). */
  prefix: string
  /**
   * Number of partitions items are spread over (`itemId mod partitions`); must match the write path.
   * @default 300 (`INTERACTION_DEFAULTS.partitions`)
   */
  partitions?: number
  /**
   * Entries kept per partition in the all-time ZSETs and cached window results; `limit` may not exceed it.
   * @default 1000
   */
  topK?: number
  /**
   * Trending windows by name (`all` is reserved for all-time).
   * @default { '1h': { windowMs: 3600000, halfLifeMs: 900000 }, '24h': { windowMs: 86400000, halfLifeMs: 21600000, cacheTtlMs: 60000 } }
   */
  windows?: Record<string, WindowSpec>
  /**
   * How long a merged window result is fresh (ms), for windows without their own `cacheTtlMs`; also the recompute lock TTL.
   * @default 5000
   */
  cacheTtlMs?: number
  /**
   * How long a merged result is kept (ms) so readers can serve it while it is recomputed.
   * @default 60000
   */
  staleTtlMs?: number
  /**
   * How long a reader with no cached result waits for the recomputer (ms) before computing privately.
   * @default 500
   */
  waitMs?: number
}

/**
 * Hot rankings on Redis (README.md beside this file), bucket design:
 * - all-time: per-partition ZSETs of counts trimmed to top K by the write path; a query reads
 *   just the entries of each partition that can make the top (exact, at most two pipelined round
 *   trips, see `readTopsByThreshold`) and merges them client-side: always current;
 * - trending: per-minute bucket ZSETs (TTL 24 h + margin) merged per partition with exponential
 *   time-decay weights `2^(−age/halfLife)` by `ZUNIONSTORE … WEIGHTS`, then across partitions, into
 *   one short-lived shared result that one instance at a time recomputes (see {@link WindowCache}).
 * Ties: score descending, then higher (newer) item id first.
 */
export class BucketRankings implements Rankings {
  readonly keys: InteractionKeys
  readonly topK: number
  private readonly windows: Map<string, ResolvedWindow>
  private readonly cache: WindowCache
  private readonly reads = new Singleflight<RankedItem[]>()

  constructor(private readonly options: RankingsOptions) {
    const layout = resolveRankingsLayout(options)
    this.keys = layout.keys
    this.topK = layout.topK
    this.windows = layout.windows
    const cacheTtlMs = integerIn('cacheTtlMs', options.cacheTtlMs ?? 5000, 1, 3_600_000)
    const staleTtlMs = integerIn('staleTtlMs', options.staleTtlMs ?? 60_000, cacheTtlMs, 86_400_000)
    const waitMs = integerIn('waitMs', options.waitMs ?? 500, 0, 60_000)
    this.cache = new WindowCache(options.redis, this.keys, {
      topK: this.topK,
      cacheTtlMs,
      staleTtlMs,
      waitMs,
    })
  }

  /** Names of the configured trending windows, plus `all`. */
  get windowNames(): string[] {
    return ['all', ...this.windows.keys()]
  }

  /** What the window cache did in this process; `corruptScores` counts all-time reads too. */
  get stats(): Readonly<WindowCacheStats> {
    return this.cache.stats
  }

  /**
   * Concurrent reads of one (metric, window, limit) in this process share one read: an all-time
   * read is one command per partition (pipelined per node), so a flood of ranking requests must
   * not multiply it. A read that starts while another is in flight gets that one's
   * answer (at most one read's time older).
   */
  async top(query: TopQuery): Promise<RankedItem[]> {
    const metric = assertQuery(query, this.topK)
    return this.reads.run(`${metric}|${query.window}|${query.limit}`, () => this.read(metric, query))
  }

  private async read(metric: RankingMetric, query: TopQuery): Promise<RankedItem[]> {
    if (query.window === 'all') {
      const tops = await readAllTimeTops(
        this.options.redis,
        this.keys,
        metric,
        query.limit,
        this.cache.countCorrupt,
      )
      return mergeTops(tops, query.limit)
    }
    return this.cache.top(metric, windowOf(this.windows, query.window), query.limit)
  }
}

/** Creates the bucket-design {@link BucketRankings}. @throws {InvalidArgumentError} for invalid options. */
export function createRankings(options: RankingsOptions): BucketRankings {
  return new BucketRankings(options)
}

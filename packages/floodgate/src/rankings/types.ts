/** What a ranking orders by. */
export type RankingMetric = 'likes' | 'plays'

/** Every metric a ranking can order by. */
export const RANKING_METRICS: readonly RankingMetric[] = ['likes', 'plays']

/** One ranked item (e.g. a video): `itemId` as a decimal string, `score` a finite number (a count, or a decayed count for windows). */
export interface RankedItem {
  itemId: string
  score: number
}

/** A query: `window` is `'all'` (all-time counts) or the name of a configured trending window (e.g. `'1h'`). */
export interface TopQuery {
  metric: RankingMetric
  window: string
  /** How many items to return, 1..topK. */
  limit: number
}

/** A trending window: its length and the half-life of its exponential decay, both in ms. */
export interface WindowSpec {
  /** Length of the window (ms); a whole number of minutes. */
  windowMs: number
  /**
   * Half-life of the time decay (ms): an event this old counts half. A finite number ≥ 1.
   * @default windowMs / 4
   */
  halfLifeMs?: number
  /**
   * How long this window's merged result stays fresh (ms): one recompute per period, fleet-wide.
   * A long window can afford a long period (its ranking moves slowly) and its merge costs more.
   * @default the rankings' `cacheTtlMs`
   */
  cacheTtlMs?: number
}

/** The read side every ranking design offers. */
export interface Rankings {
  /**
   * The top `limit` items for a metric and window, in rank order (score
   * descending, ties: higher = newer item id first).
   * @throws {InvalidArgumentError} for an unknown metric or window or a limit outside 1..topK.
   * @throws {StoreUnavailableError} when Redis fails.
   */
  top(query: TopQuery): Promise<RankedItem[]>
}

/**
 * Default windows: 1 h with a 15 min half-life, 24 h with a 6 h half-life (half-life = window / 4);
 * the 24 h merge (1,440 buckets per partition) is recomputed at most once a minute.
 */
export const DEFAULT_WINDOWS: Readonly<Record<string, WindowSpec>> = {
  '1h': { windowMs: 3_600_000, halfLifeMs: 900_000 },
  '24h': { windowMs: 86_400_000, halfLifeMs: 21_600_000, cacheTtlMs: 60_000 },
}

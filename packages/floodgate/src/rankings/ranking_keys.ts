import type { InteractionKeys, RankMetric } from '../interactions/keys.js'

/**
 * Keys the read side adds to the shared interaction layout
 * ({@link InteractionKeys}); all carry the partition's tag `{<tag>}` (`keys.tagOf(p)`).
 */

/** Recompute lock, and freshness marker, of a cached window result: `<rankWindow>:lock`. */
export function windowLockKey(keys: InteractionKeys, p: number, metric: RankMetric, window: string): string {
  return `${keys.rankWindow(p, metric, window)}:lock`
}

/** Decayed-score ZSET of the log-space alternative: `<prefix>:rank:{<tag>}:decay:<metric>:<window>`. */
export function decayedKey(keys: InteractionKeys, p: number, metric: RankMetric, window: string): string {
  return keys.space.tagged('rank', keys.tagOf(p), `decay:${metric}:${window}`)
}

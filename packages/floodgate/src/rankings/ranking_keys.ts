import type { InteractionKeys, RankMetric } from '../interactions/keys.js'

/**
 * Keys the read side adds to the shared interaction layout ({@link InteractionKeys}).
 */

/**
 * The merged top `limit` of a trending window over all partitions (STRING, JSON) and its recompute
 * lock, which doubles as the freshness marker: `<prefix>:rank:{top:<metric>:<window>:<limit>}` and
 * `…:lock`. One hash tag, so the read's three commands go to one node.
 */
export function windowTopKeys(
  keys: InteractionKeys,
  metric: RankMetric,
  window: string,
  limit: number,
): { value: string; lock: string } {
  const tag = `top:${metric}:${window}:${limit}`
  return { value: keys.space.tagged('rank', tag), lock: keys.space.tagged('rank', tag, 'lock') }
}

/** Decayed-score ZSET of the log-space alternative: `<prefix>:rank:{<tag>}:decay:<metric>:<window>`. */
export function decayedKey(keys: InteractionKeys, p: number, metric: RankMetric, window: string): string {
  return keys.space.tagged('rank', keys.tagOf(p), `decay:${metric}:${window}`)
}

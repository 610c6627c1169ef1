import type { InteractionKeys } from '../interactions/keys.js'
import type { RedisClient } from '../redis/index.js'
import { type Entries, readTopsByThreshold } from './threshold_read.js'
import type { RankingMetric } from './types.js'

/**
 * Reads, from the per-partition all-time ZSETs, the entries that can make the global top
 * `limit` (exact, at most two pipelined round trips: see {@link readTopsByThreshold}). Counts of
 * 0 or below are not ranked. Members with a non-finite score are left out and passed to `onCorrupt`.
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function readAllTimeTops(
  redis: RedisClient,
  keys: InteractionKeys,
  metric: RankingMetric,
  limit: number,
  onCorrupt?: () => void,
): Promise<Entries[]> {
  const { parts } = await readTopsByThreshold(
    redis,
    (p) => keys.rankAll(p, metric),
    keys.partitions,
    limit,
    'all-time ranking read',
    {
      keep: (score) => score > 0,
      onCorrupt,
    },
  )
  return parts
}

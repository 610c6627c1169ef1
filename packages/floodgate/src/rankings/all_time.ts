import type { InteractionKeys } from '../interactions/keys.js'
import type { RedisClient } from '../redis/index.js'
import { parseWithScores } from './merge.js'
import { SlotBatch } from './slot_batch.js'
import type { RankingMetric } from './types.js'

/**
 * Reads the all-time top `limit` of every partition in one pipelined round
 * trip (`ZREVRANGE 0 limit−1 WITHSCORES` per partition ZSET). Members with a
 * non-finite score are left out and passed to `onCorrupt`.
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function readAllTimeTops(
  redis: RedisClient,
  keys: InteractionKeys,
  metric: RankingMetric,
  limit: number,
  onCorrupt?: () => void,
): Promise<{ id: string; score: number }[][]> {
  const batch = new SlotBatch(redis)
  for (let p = 0; p < keys.partitions; p++) {
    const key = keys.rankAll(p, metric)
    batch.add(key, (pipe) => pipe.zrevrange(key, 0, limit - 1, 'WITHSCORES'))
  }
  const replies = await batch.exec('all-time ranking read')
  return replies.map((reply) => parseWithScores(reply, onCorrupt))
}

import type { InteractionKeys } from '../interactions/keys.js'
import type { RedisClient } from '../redis/index.js'
import { parseWithScores } from './merge.js'
import { execAll } from './pipeline_results.js'
import type { RankingMetric } from './types.js'

/**
 * Reads the all-time top `limit` of every partition in one pipelined round
 * trip (`ZREVRANGE 0 limit−1 WITHSCORES` per partition ZSET).
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function readAllTimeTops(
  redis: RedisClient,
  keys: InteractionKeys,
  metric: RankingMetric,
  limit: number,
): Promise<{ id: string; score: number }[][]> {
  const pipeline = redis.pipeline()
  for (let p = 0; p < keys.partitions; p++)
    pipeline.zrevrange(keys.rankAll(p, metric), 0, limit - 1, 'WITHSCORES')
  const replies = await execAll(pipeline, 'all-time ranking read')
  return replies.map(parseWithScores)
}

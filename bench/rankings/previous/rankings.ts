import { InteractionKeys } from '../../../packages/floodgate/src/interactions/keys.js'
import { mergeTops, parseWithScores } from '../../../packages/floodgate/src/rankings/merge.js'
import { type ResolvedWindow, windowOf } from '../../../packages/floodgate/src/rankings/options.js'
import { SlotBatch } from '../../../packages/floodgate/src/rankings/slot_batch.js'
import type { RankedItem, TopQuery } from '../../../packages/floodgate/src/rankings/types.js'
import type { RedisClient } from '../../../packages/floodgate/src/redis/index.js'
import { WindowCache } from './window_cache.js'

/**
 * The ranking reads before the shared merged top (the bench's baseline): all-time reads every
 * partition's top `limit`; a window probes every partition's cached merge (4 commands each) and
 * recomputes per partition with every bucket key and weight sent as arguments.
 */
export class PreviousRankings {
  private readonly keys: InteractionKeys
  private readonly cache: WindowCache

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    partitions: number,
    private readonly windows: Map<string, ResolvedWindow>,
  ) {
    this.keys = new InteractionKeys(prefix, partitions)
    this.cache = new WindowCache(redis, this.keys, {
      topK: 1000,
      cacheTtlMs: 5000,
      staleTtlMs: 60_000,
      waitMs: 500,
    })
  }

  async top(query: TopQuery): Promise<RankedItem[]> {
    if (query.window !== 'all')
      return mergeTops(
        await this.cache.tops(query.metric, windowOf(this.windows, query.window), query.limit),
        query.limit,
      )
    const batch = new SlotBatch(this.redis)
    for (let p = 0; p < this.keys.partitions; p++) {
      const key = this.keys.rankAll(p, query.metric)
      batch.add(key, (pipe) => pipe.zrevrange(key, 0, query.limit - 1, 'WITHSCORES'))
    }
    const replies = await batch.exec('all-time ranking read')
    return mergeTops(
      replies.map((reply) => parseWithScores(reply)),
      query.limit,
    )
  }

  /** Drops a window's per-partition recompute locks, so the next read recomputes. */
  async dropLocks(metric: 'likes' | 'plays', window: string): Promise<void> {
    await this.redis.del(
      ...this.keys
        .allPartitions()
        .map((p) => `${this.keys.space.tagged('rank', this.keys.tagOf(p), `win:${metric}:${window}`)}:lock`),
    )
  }
}

import type { RedisClient } from '../redis/index.js'
import type { BloomLayout } from './layout.js'
import type { BitPositions } from './positions.js'
import { addReply, addScript, checkReply, checkScript } from './scripts.js'

/** Items of one batch that live in one shard: their indexes in the batch and their k offsets each. */
export interface ShardBatch {
  shard: number
  indexes: number[]
  offsets: number[]
}

/** Groups items by shard, at most `itemsPerCall` items per group (one script call each). */
export function groupByShard(
  positions: BitPositions,
  items: readonly string[],
  itemsPerCall: number,
): ShardBatch[] {
  const grouping = new ShardGrouping(positions, itemsPerCall)
  grouping.add(items)
  return grouping.batches
}

/** {@link groupByShard} piece by piece: a long list is hashed in several calls of {@link add}. */
export class ShardGrouping {
  readonly batches: ShardBatch[] = []
  private readonly open = new Map<number, ShardBatch>()

  constructor(
    private readonly positions: BitPositions,
    private readonly itemsPerCall: number,
  ) {}

  /** Adds `items`, the first of which has index `from` in the whole list. */
  add(items: readonly string[], from = 0): void {
    for (let i = 0; i < items.length; i++) {
      const { shard, offsets } = this.positions.of(items[i]!)
      let batch = this.open.get(shard)
      if (!batch || batch.indexes.length >= this.itemsPerCall) {
        batch = { shard, indexes: [], offsets: [] }
        this.open.set(shard, batch)
        this.batches.push(batch)
      }
      batch.indexes.push(from + i)
      for (const offset of offsets) batch.offsets.push(offset)
    }
  }
}

/**
 * Sets the bits of every batch in generation `generation`, all calls sent at
 * once (one round trip). Resolves false if some shard key did not exist.
 */
export async function writeBatches(
  redis: RedisClient,
  layout: BloomLayout,
  generation: number,
  batches: readonly ShardBatch[],
): Promise<boolean> {
  const replies = await Promise.all(
    batches.map((b) => addScript.run(redis, [layout.shardKey(b.shard, generation)], b.offsets)),
  )
  return replies.map(addReply).every((reply) => reply === 'written')
}

/**
 * Tests every batch against generation `generation`, all calls sent at once.
 * Resolves one answer per item (`count` items), or null if some shard key did
 * not exist (the generation is gone: the answers would not be trustworthy).
 */
export async function checkBatches(
  redis: RedisClient,
  layout: BloomLayout,
  generation: number,
  batches: readonly ShardBatch[],
  count: number,
): Promise<boolean[] | null> {
  const replies = await Promise.all(
    batches.map((b) =>
      checkScript.run(redis, [layout.shardKey(b.shard, generation)], [layout.hashes, ...b.offsets]),
    ),
  )
  const answers = new Array<boolean>(count).fill(true)
  for (let i = 0; i < batches.length; i++) {
    const batch = batches[i]!
    const bits = checkReply(replies[i], batch.indexes.length)
    if (bits === null) return null
    for (let j = 0; j < batch.indexes.length; j++) answers[batch.indexes[j]!] = bits[j]!
  }
  return answers
}

import { Mutex } from '../lock/index.js'
import type { KeySpace, RedisClient } from '../redis/index.js'
import { BloomRebuildError } from './errors.js'
import type { BloomLayout } from './layout.js'
import type { BitPositions } from './positions.js'
import { publishScript } from './scripts.js'
import { groupByShard, writeBatches } from './shard_ops.js'

export interface RebuildOptions {
  /** How long to wait for a rebuild already running elsewhere (ms). @default 0 (fail at once with LockTimeoutError) */
  lockWaitMs?: number
  /** Cancels the rebuild between chunks; the served generation is left as it was. */
  signal?: AbortSignal
}

export interface RebuildResult {
  /** The generation now served. */
  generation: number
  /** Items read from the source. */
  items: number
  /** Wall time of the rebuild (ms). */
  durationMs: number
}

/** @internal What a rebuild needs from its filter. */
export interface RebuildContext {
  redis: RedisClient
  keySpace: KeySpace
  layout: BloomLayout
  positions: BitPositions
  itemsPerCall: number
}

/**
 * Builds a fresh generation and switches to it (see `BloomFilter.rebuild`).
 * Steps: take the rebuild Mutex (watchdog on); allocate generation G' (HINCRBY
 * seq) and pre-allocate its shard keys; set `building = G'` (from here every
 * `add` writes G' too); stream the source into G' chunk by chunk (one
 * pipelined round trip per chunk); switch `ready` to G' atomically
 * (`publish-1.lua`); UNLINK the previous generation.
 */
export async function rebuildGeneration(
  ctx: RebuildContext,
  source: AsyncIterable<readonly string[]>,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const started = Date.now()
  const { redis, layout } = ctx
  const mutex = Mutex.named(redis, ctx.keySpace, layout.lockName, { ttlMs: 30_000, watchdog: true })
  const lease = await mutex.acquire({ waitMs: options.lockWaitMs ?? 0 })
  let generation = 0
  try {
    const before = await layout.readGenerations(redis)
    generation = await redis.hincrby(layout.meta, 'seq', 1)
    // SETBIT of the last bit allocates the whole bitmap, so add-1.lua finds the key
    await Promise.all(
      layout.shardKeys(generation).map((key) => redis.setbit(key, layout.bitsPerShard - 1, 0)),
    )
    await redis.hset(layout.meta, 'building', generation)
    if (before.building !== null) await dropGeneration(redis, layout, before.building) // abandoned run
    let items = 0
    for await (const chunk of source) {
      stopIfNeeded(lease.signal, options.signal)
      const batches = groupByShard(ctx.positions, chunk, ctx.itemsPerCall)
      if (!(await writeBatches(redis, layout, generation, batches)))
        throw new BloomRebuildError(`bloom ${layout.name}: shard keys of generation ${generation} vanished`)
      items += chunk.length
    }
    stopIfNeeded(lease.signal, options.signal)
    const previous = await publishScript.run(redis, [layout.meta], [generation])
    if (typeof previous !== 'number' || previous < 0)
      throw new BloomRebuildError(`bloom ${layout.name}: generation ${generation} was superseded`)
    if (previous > 0) await dropGeneration(redis, layout, previous)
    return { generation, items, durationMs: Date.now() - started }
  } catch (error) {
    if (generation > 0) await abandon(ctx, generation)
    throw error
  } finally {
    await lease.release().catch(() => undefined)
  }
}

/**
 * UNLINKs the shard keys of `generation`, one UNLINK per shard: each shard has
 * its own hash tag, so on Redis Cluster one multi-key UNLINK would be refused
 * with CROSSSLOT.
 */
async function dropGeneration(redis: RedisClient, layout: BloomLayout, generation: number): Promise<void> {
  await Promise.all(layout.shardKeys(generation).map((key) => redis.unlink(key)))
}

function stopIfNeeded(lease: AbortSignal, caller: AbortSignal | undefined): void {
  if (lease.aborted) throw new BloomRebuildError('rebuild lock lost', { cause: lease.reason })
  if (caller?.aborted) throw new BloomRebuildError('rebuild aborted', { cause: caller.reason })
}

/** Best effort: clear our `building` marker and drop our keys (still under the rebuild lock). */
async function abandon(ctx: RebuildContext, generation: number): Promise<void> {
  try {
    const building = await ctx.redis.hget(ctx.layout.meta, 'building')
    if (building === String(generation)) await ctx.redis.hdel(ctx.layout.meta, 'building')
    const ready = await ctx.redis.hget(ctx.layout.meta, 'ready')
    if (ready !== String(generation)) await dropGeneration(ctx.redis, ctx.layout, generation)
  } catch {
    // Redis is failing: the marker stays; the next rebuild replaces it and drops these keys
  }
}

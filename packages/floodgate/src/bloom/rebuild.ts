import { Mutex } from '../lock/index.js'
import type { KeySpace, RedisClient } from '../redis/index.js'
import { BloomRebuildError, BloomRebuiltElsewhereError } from './errors.js'
import type { BloomLayout } from './layout.js'
import { LoopSlices } from './loop_slices.js'
import type { BitPositions } from './positions.js'
import { addReply, addScript, mergeReply, mergeScript, publishReply, publishScript } from './scripts.js'
import { ShardBitmaps } from './shard_bitmaps.js'
import { ShardGrouping } from './shard_ops.js'

export interface RebuildOptions {
  /** How long to wait for a rebuild already running elsewhere (ms). @default 0 (fail at once with LockTimeoutError) */
  lockWaitMs?: number
  /** Cancels the rebuild between chunks; the served generation is left as it was. */
  signal?: AbortSignal
  /**
   * The `ready` generation the caller saw before asking (null: none). When, once the lock is
   * held, `ready` points at another generation, another instance rebuilt meanwhile: nothing is
   * rebuilt ({@link BloomRebuiltElsewhereError}). Unset: rebuild whatever is served.
   */
  ifReadyIs?: number | null
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
  /** Largest filter (m / 8 bytes) built in process memory; a larger one is written chunk by chunk. */
  bufferMaxBytes: number
  /** Longest run (ms) of CPU work between two turns of the event loop. */
  sliceMs: number
}

/** Bytes per write of a staged shard bitmap (SET, then SETRANGE): bounds one command's size. */
const STAGE_WRITE_BYTES = 1 << 20
/** TTL (ms) of a staged shard bitmap, so a rebuild that died before its merge leaves nothing behind. */
const STAGE_TTL_MS = 60_000
/** Ids hashed between two looks at the clock (about 0.2–0.5 ms of work): the grain of a slice. */
const PIECE_ITEMS = 256

/**
 * Builds a fresh generation and switches to it (see `BloomFilter.rebuild`).
 * Steps: take the rebuild Mutex (watchdog on); allocate generation G' (HINCRBY
 * seq) and pre-allocate its shard keys; set `building = G'` (from here every
 * `add` writes G' too); read the source into G'; switch `ready` to G'
 * atomically (`publish-1.lua`); UNLINK the previous generation.
 *
 * Reading the source: when the filter's m / 8 bytes fit `bufferMaxBytes`, the
 * bits are set in process memory and each shard is then written once (staged
 * under the shard's hash tag, OR-ed in by `merge-2.lua`, so concurrent adds
 * are kept): a few commands per shard whatever the item count. Otherwise each
 * chunk is sent as `add-1.lua` calls of k offsets per item (one pipelined round
 * trip per chunk), which costs this process and Redis about 20 times more CPU
 * (100k ids, k = 7: 700k SETBITs in Lua, 700k numbers encoded).
 *
 * The CPU work (hashing each chunk, encoding its writes, scanning the bitmaps) runs in slices of
 * `sliceMs` with a turn of the event loop between them ({@link LoopSlices}): a rebuild runs on a
 * serving process, whose requests would otherwise wait behind a whole chunk.
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
    // checked under the lock: a holder that published and released just before we took it
    if (options.ifReadyIs !== undefined && before.ready !== null && before.ready !== options.ifReadyIs)
      throw new BloomRebuiltElsewhereError(before.ready)
    generation = await redis.hincrby(layout.meta, 'seq', 1)
    // SETBIT of the last bit allocates the whole bitmap, so add-1.lua finds the key
    await Promise.all(
      layout.shardKeys(generation).map((key) => redis.setbit(key, layout.bitsPerShard - 1, 0)),
    )
    await redis.hset(layout.meta, 'building', generation)
    if (before.building !== null) await dropGeneration(redis, layout, before.building) // abandoned run
    const vanished = () =>
      new BloomRebuildError(`bloom ${layout.name}: shard keys of generation ${generation} vanished`)
    const local = layout.shards * Math.ceil(layout.bitsPerShard / 8) <= ctx.bufferMaxBytes
    const bitmaps = local ? new ShardBitmaps(ctx.positions, layout.shards, layout.bitsPerShard) : undefined
    const slices = new LoopSlices(ctx.sliceMs)
    let items = 0
    for await (const chunk of source) {
      stopIfNeeded(lease.signal, options.signal)
      if (bitmaps) await slices.forEachPiece(chunk, PIECE_ITEMS, (piece) => bitmaps.addAll(piece))
      else if (!(await writeChunk(ctx, generation, chunk, slices))) throw vanished()
      items += chunk.length
    }
    if (bitmaps) {
      for (let shard = 0; shard < layout.shards; shard++) {
        stopIfNeeded(lease.signal, options.signal)
        if (!(await mergeShard(redis, layout.shardKey(shard, generation), bitmaps.shard(shard), slices)))
          throw vanished()
      }
    }
    stopIfNeeded(lease.signal, options.signal)
    const previous = publishReply(await publishScript.run(redis, [layout.meta], [generation, layout.channel]))
    if (previous === null)
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
 * Sets the bits of `chunk` in `generation` with `add-1.lua` calls of at most `itemsPerCall` items,
 * hashed and sent slice by slice, all replies awaited together (one round trip's worth of
 * pipelining, as one batch would). Resolves false if some shard key did not exist.
 */
async function writeChunk(
  ctx: RebuildContext,
  generation: number,
  chunk: readonly string[],
  slices: LoopSlices,
): Promise<boolean> {
  const grouping = new ShardGrouping(ctx.positions, ctx.itemsPerCall)
  await slices.forEachPiece(chunk, PIECE_ITEMS, (piece, from) => grouping.add(piece, from))
  const replies: Promise<unknown>[] = []
  for (const batch of grouping.batches) {
    const reply = addScript.run(ctx.redis, [ctx.layout.shardKey(batch.shard, generation)], batch.offsets)
    // handled here too: a failure while later calls are still being encoded is not "unhandled"
    reply.catch(() => undefined)
    replies.push(reply)
    await slices.pause()
  }
  return (await Promise.all(replies)).map(addReply).every((reply) => reply === 'written')
}

/**
 * Writes `bits` to a staging key next to `shardKey` (same hash tag; SET with a
 * TTL, then SETRANGE, at most 1 MiB per command) and ORs it into the shard
 * (`merge-2.lua`). An all-zero bitmap writes nothing. Resolves false when the
 * shard key no longer exists.
 */
async function mergeShard(
  redis: RedisClient,
  shardKey: string,
  bits: Uint8Array,
  slices: LoopSlices,
): Promise<boolean> {
  if (await allZero(bits, slices)) return (await redis.exists(shardKey)) === 1
  const staged = `${shardKey}:staged`
  for (let offset = 0; offset < bits.length; offset += STAGE_WRITE_BYTES) {
    const piece = Buffer.from(
      bits.buffer,
      bits.byteOffset + offset,
      Math.min(STAGE_WRITE_BYTES, bits.length - offset),
    )
    if (offset === 0) await redis.set(staged, piece, 'PX', STAGE_TTL_MS)
    else await redis.setrange(staged, offset, piece)
  }
  return mergeReply(await mergeScript.run(redis, [shardKey, staged], [])) === 'merged'
}

/** Whether every byte of `bits` is 0, scanned 1 MiB at a time (a shard may hold 512 MiB). */
async function allZero(bits: Uint8Array, slices: LoopSlices): Promise<boolean> {
  for (let offset = 0; offset < bits.length; offset += STAGE_WRITE_BYTES) {
    const end = Math.min(bits.length, offset + STAGE_WRITE_BYTES)
    for (let i = offset; i < end; i++) if (bits[i] !== 0) return false
    await slices.pause()
  }
  return true
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

import { StoreUnavailableError } from '../errors/index.js'
import type { RedisClient } from '../redis/index.js'
import { type BloomLayout, toGeneration } from './layout.js'

/** The bits of the ready generation, and the last add they are known to hold. */
export interface LoadedBits {
  generation: number
  /** Every add numbered ≤ this (`addseq` read before the bits) is in `bitmaps`. */
  addSeq: number
  /** One bitmap per shard, ⌈bitsPerShard / 8⌉ bytes each (Redis bit order). */
  bitmaps: Uint8Array[]
}

/** Bytes per GETRANGE of a shard: bounds one reply's size (and how long it holds Redis). */
const CHUNK_BYTES = 1 << 20
/** Loads tried when `ready` moves under a load, before giving up. */
const MAX_ATTEMPTS = 3

/**
 * Reads `ready` and `addseq` (one HMGET), then the ready generation's shard bitmaps (GETRANGE,
 * {@link CHUNK_BYTES} per command), then checks `ready` did not move. Adds write their bits before
 * they are numbered (`announce-1.lua`), so every add numbered ≤ `addSeq` is in these bits.
 * Resolves null when the filter is not ready (never built, or its meta hash is gone).
 * @throws {StoreUnavailableError} on a Redis error, or when `ready` moved under every attempt.
 */
export async function loadReadyBits(redis: RedisClient, layout: BloomLayout): Promise<LoadedBits | null> {
  const bytes = Math.ceil(layout.bitsPerShard / 8)
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const [readyField, addSeqField] = await redis.hmget(layout.meta, 'ready', 'addseq')
      const generation = toGeneration(readyField)
      if (generation === null) return null
      const bitmaps = await Promise.all(
        layout.shardKeys(generation).map((key) => readBitmap(redis, key, bytes)),
      )
      // a shard shorter than pre-allocated was dropped (generation switched): read again
      if (bitmaps.some((b) => b === null)) continue
      if ((await redis.hget(layout.meta, 'ready')) !== readyField) continue
      return { generation, addSeq: Number(addSeqField ?? 0), bitmaps: bitmaps as Uint8Array[] }
    }
  } catch (error) {
    throw new StoreUnavailableError(`bloom ${layout.name}: loading the replica failed`, { cause: error })
  }
  throw new StoreUnavailableError(`bloom ${layout.name}: generations kept changing during the replica load`)
}

/** A shard's bytes, or null when the key holds fewer than `bytes` (gone). */
async function readBitmap(redis: RedisClient, key: string, bytes: number): Promise<Uint8Array | null> {
  const bitmap = new Uint8Array(bytes)
  for (let offset = 0; offset < bytes; offset += CHUNK_BYTES) {
    const end = Math.min(bytes, offset + CHUNK_BYTES) - 1
    const piece = await redis.getrangeBuffer(key, offset, end)
    if (piece.length !== end - offset + 1) return null
    bitmap.set(piece, offset)
  }
  return bitmap
}

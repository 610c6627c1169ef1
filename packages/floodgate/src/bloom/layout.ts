import type { KeySpace, RedisClient } from '../redis/index.js'

/** The generation pointers of a filter, as read from its meta hash. */
export interface Generations {
  /** Generation served to queries; null when the filter was never built (not ready). */
  ready: number | null
  /** Generation being rebuilt; null when no rebuild runs. */
  building: number | null
}

/**
 * Key layout of one filter. The shape (bits per shard, k, shards) is part of
 * every key, so a filter with another shape never reads these bits: it starts
 * "not ready" until rebuilt.
 *
 * - meta hash `<prefix>:bloom:{<name>}:<shape>:meta` — fields `ready`,
 *   `building`, `seq` (generation counter), `addseq` (announced adds). No TTL.
 * - channel `<prefix>:bloom:{<name>}:<shape>:adds` — announced adds
 *   (`<addseq> <JSON array of items>`) and generation switches (`g <generation>`),
 *   read by replicas (see `replica.ts`).
 * - shard bitmaps `<prefix>:bloom:{<name>:<shard>}:<shape>:g<generation>` — each
 *   shard has its own hash tag, so a Redis Cluster spreads them. No TTL; an
 *   old generation is UNLINKed after the switch.
 */
export class BloomLayout {
  readonly meta: string
  readonly channel: string
  readonly shape: string

  constructor(
    private readonly keySpace: KeySpace,
    readonly name: string,
    readonly bitsPerShard: number,
    readonly hashes: number,
    readonly shards: number,
  ) {
    this.shape = `m${bitsPerShard}k${hashes}s${shards}`
    this.meta = keySpace.tagged('bloom', name, `${this.shape}:meta`)
    this.channel = keySpace.tagged('bloom', name, `${this.shape}:adds`)
  }

  shardKey(shard: number, generation: number): string {
    return this.keySpace.tagged('bloom', `${this.name}:${shard}`, `${this.shape}:g${generation}`)
  }

  shardKeys(generation: number): string[] {
    return Array.from({ length: this.shards }, (_, shard) => this.shardKey(shard, generation))
  }

  /** Name of the rebuild Mutex (under the `lock` area of the same KeySpace). */
  get lockName(): string {
    return `bloom:${this.name}:${this.shape}`
  }

  async readGenerations(redis: RedisClient): Promise<Generations> {
    const [ready, building] = await redis.hmget(this.meta, 'ready', 'building')
    return { ready: toGeneration(ready), building: toGeneration(building) }
  }
}

/** A generation number from the meta hash; null when absent or not a positive integer. */
export function toGeneration(value: string | null | undefined): number | null {
  if (value === null || value === undefined) return null
  const n = Number(value)
  return Number.isInteger(n) && n > 0 ? n : null
}

export function sameGenerations(a: Generations, b: Generations): boolean {
  return a.ready === b.ready && a.building === b.building
}

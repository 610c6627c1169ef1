import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Redis } from 'ioredis'

/** Settings of the older design (units in the names). */
export interface LegacyCacheSettings {
  /** Fixed TTL of a cached value (ms). @default 300_000 */
  ttlMs?: number
  /** TTL of the null sentinel (ms). @default 60_000 */
  nullTtlMs?: number
  /** TTL of the SET NX load lock (ms). @default 5_000 */
  lockTtlMs?: number
  /** Longest a waiter polls before it loads from the database itself (ms). @default 2_000 */
  lockWaitMs?: number
  /** Polling interval of a waiter (ms). @default 50 */
  pollMs?: number
}

/** The null sentinel of the older design: "looked up, does not exist". */
export const NULL_SENTINEL = '\u0000NULL\u0000'
const unlockLua = readFileSync(new URL('./unlock-1.lua', import.meta.url), 'utf8')

/**
 * The older design from `../shared/reference/seeds` (000: cache.go), as the
 * benchmark's baseline: cache-aside; a miss takes a Redis `SET NX PX` lock
 * (random token, compare-and-delete release in Lua); losers poll the key
 * every 50 ms for up to 2 s, then load from the database themselves; "not
 * found" is cached as a null sentinel; one fixed TTL; singleflight within a
 * process. No Bloom gate, no stale-while-revalidate, no in-process L1, no
 * TTL jitter. A Redis error on the read path falls through to the database
 * (the seed's behaviour when Redis is down).
 */
export class LegacyCache {
  private readonly s: Required<LegacyCacheSettings>
  private readonly inflight = new Map<string, Promise<unknown>>()

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    settings: LegacyCacheSettings = {},
  ) {
    this.s = {
      ttlMs: 300_000,
      nullTtlMs: 60_000,
      lockTtlMs: 5_000,
      lockWaitMs: 2_000,
      pollMs: 50,
      ...settings,
    }
  }

  /** The cached value of `key`, else `load()` (undefined = not found) under the lock, cached. */
  get<T>(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const running = this.inflight.get(key) as Promise<T | undefined> | undefined
    if (running) return running
    const p = this.fetch(key, load).finally(() => this.inflight.delete(key))
    this.inflight.set(key, p)
    return p
  }

  private async fetch<T>(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const dataKey = `${this.prefix}:legacy:{${key}}`
    const lockKey = `${dataKey}:lock`
    let cached: string | null
    try {
      cached = await this.redis.get(dataKey)
    } catch {
      return load() // Redis down: straight to the database
    }
    if (cached !== null) return decode<T>(cached)
    const token = randomBytes(8).toString('hex')
    let locked = false
    try {
      locked = (await this.redis.set(lockKey, token, 'PX', this.s.lockTtlMs, 'NX')) === 'OK'
    } catch {
      return load()
    }
    if (locked) {
      try {
        const value = await load()
        await this.redis
          .set(
            dataKey,
            value === undefined ? NULL_SENTINEL : JSON.stringify(value),
            'PX',
            value === undefined ? this.s.nullTtlMs : this.s.ttlMs,
          )
          .catch(() => {})
        return value
      } finally {
        await this.redis.eval(unlockLua, 1, lockKey, token).catch(() => {})
      }
    }
    const deadline = Date.now() + this.s.lockWaitMs
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, this.s.pollMs))
      const polled = await this.redis.get(dataKey).catch(() => null)
      if (polled !== null) return decode<T>(polled)
    }
    return load() // waited the full 2 s: the seed degrades to a direct load
  }

  /** Deletes the cached value (the write path's cache-aside invalidation). */
  async invalidate(key: string): Promise<void> {
    await this.redis.del(`${this.prefix}:legacy:{${key}}`).catch(() => {})
  }
}

function decode<T>(text: string): T | undefined {
  return text === NULL_SENTINEL ? undefined : (JSON.parse(text) as T)
}

import { entryValue } from './cache_core.js'
import { type BatchLoader, type GetManyContext, getMany } from './get_many.js'
import { type InvalidationResult, invalidateKeys } from './invalidation.js'
import type { L1Cache } from './l1/l1_cache.js'
import { UNAVAILABLE } from './l2/l2_store.js'
import { isNotFound } from './not_found.js'
import type { CacheOptions, CallOptions } from './options.js'
import { layerCallOptions } from './options.js'
import { ReadThroughCache } from './read_path.js'

export type { Loader } from './cache_core.js'

/**
 * A cache-aside cache: L1 (in-process LRU) → Bloom gate → L2 (Redis) → loader,
 * with singleflight per process, a Redis mutex per key across processes,
 * negative caching, TTL jitter, stale-while-revalidate, versioned invalidation
 * broadcast to every instance's L1, and a circuit breaker on Redis.
 * Create with {@link createCache}.
 */
export class Cache<T = unknown> extends ReadThroughCache<T> {
  /**
   * Many keys at once: L1, Bloom gate, one MGET, one `batchLoader` call for the misses, parallel fills.
   * @returns a Map from each distinct key to its value, `undefined` for not found.
   * @throws whatever `batchLoader` throws.
   */
  getManyOrLoad(
    keys: readonly string[],
    batchLoader: BatchLoader<T>,
    options?: CallOptions,
  ): Promise<Map<string, T | undefined>> {
    const o = layerCallOptions(this.o.call, options)
    return getMany(this.internals(), keys, batchLoader, o)
  }

  /**
   * Reads `key` without loading: L1, then L2 (kept in L1 on a hit). Fresh values only: a stale
   * entry (past its TTL, even inside the stale-while-revalidate window), a negative entry, a miss
   * and an unreachable Redis all give `undefined`. Not counted in the outcome events (those
   * describe `getOrLoad` calls, so their hit ratio stays per load-capable call).
   * @returns the value, or `undefined`.
   */
  async get(key: string): Promise<T | undefined> {
    const now = Date.now()
    const local = this.l1?.get(key, now)
    if (local !== undefined) return isNotFound(local.value) ? undefined : local.value
    const epoch = this.l1?.epoch ?? 0
    const raw = await this.l2.read(key)
    const entry = raw === UNAVAILABLE || raw === null ? undefined : await this.decode(key, raw)
    if (entry === undefined || entry.expiresAtMs <= now) return undefined
    this.remember(key, entry, layerCallOptions(this.o.call, undefined), epoch)
    const value = entryValue(entry)
    return isNotFound(value) ? undefined : value
  }

  /** Whether {@link get} finds a fresh value for `key` (same rules, no load). */
  async has(key: string): Promise<boolean> {
    return (await this.get(key)) !== undefined
  }

  /**
   * Removes `keys` everywhere, as {@link invalidate} (the name peers use). Never throws on Redis errors.
   */
  delete(keys: string | readonly string[]): Promise<InvalidationResult> {
    return this.invalidate(keys)
  }

  /**
   * Writes `value` directly (write-through): L2 via set-2.lua (moves the version,
   * so older in-flight loads cannot overwrite it), this process's L1, and an L1
   * invalidation for the other instances.
   * @throws {StoreUnavailableError} when Redis failed (the L1 invalidation is still published when possible).
   */
  async set(key: string, value: T, options?: CallOptions): Promise<void> {
    const o = layerCallOptions(this.o.call, options)
    const envelope = this.envelope(value, o, '0')
    this.l1?.delete([key])
    const epoch = this.l1?.epoch ?? 0
    try {
      await this.l2.set(key, envelope.bytes, envelope.physicalTtlMs, this.versionTtlMs)
      this.rememberLoaded(key, value, envelope, o, epoch)
    } finally {
      await this.l2.publishInvalidation(JSON.stringify({ from: this.instanceId, keys: [key] }))
    }
  }

  /**
   * Invalidates `keys` everywhere: this L1 at once, L2 (delete + version bump,
   * so a load that began earlier cannot write afterwards), and every other
   * instance's L1 through the bus (published even if the L2 step failed; failed
   * L2 steps are retried in the background). Never throws on Redis errors.
   */
  invalidate(keys: string | readonly string[]): Promise<InvalidationResult> {
    return invalidateKeys(
      {
        instanceId: this.instanceId,
        l1: this.l1 as L1Cache<unknown> | undefined,
        l2: this.l2,
        versionTtlMs: this.versionTtlMs,
        retries: this.o.invalidateRetries,
        onGiveUp: (key, error) => this.events.emit('background_error', { key, error, task: 'invalidate' }),
      },
      typeof keys === 'string' ? [keys] : keys,
    )
  }

  private internals(): GetManyContext<T> {
    return {
      l1: this.l1,
      l2: this.l2,
      decode: (key, raw) => this.decode(key, raw),
      envelope: (value, o, version) => this.envelope(value, o, version),
      remember: (key, entry, o, epoch) => this.remember(key, entry, o, epoch),
      rememberLoaded: (key, value, envelope, o, epoch) => this.rememberLoaded(key, value, envelope, o, epoch),
      bloomAllows: (bloom, keys) => this.bloomAllows(bloom, keys),
      count: (outcome, key) => this.count(outcome, key),
      timeLoad: async (fn) => {
        const started = performance.now()
        try {
          return await fn()
        } finally {
          this.count('load', undefined, undefined, performance.now() - started)
        }
      },
    }
  }
}

/**
 * Creates a cache. See {@link CacheOptions} for every option, its default and unit.
 * @throws {InvalidArgumentError} naming the offending option.
 */
export function createCache<T = unknown>(options: CacheOptions<T>): Cache<T> {
  return new Cache<T>(options)
}

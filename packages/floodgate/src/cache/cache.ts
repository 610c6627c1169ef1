import { randomBytes } from 'node:crypto'
import { CircuitBreaker } from '../circuit_breaker/index.js'
import { bindCacheMetrics } from '../metrics/index.js'
import { KeySpace } from '../redis/index.js'
import { CacheBus } from './bus/cache_bus.js'
import { WakeWaiters } from './bus/wake_waiters.js'
import { type Codec, jsonCodec } from './codec.js'
import { decodeEnvelope, type Envelope, encodeNegative, encodeValue } from './envelope.js'
import { CacheEventEmitter, type CacheOutcome } from './events.js'
import { type BatchLoader, type GetManyContext, getMany } from './get_many.js'
import { type InvalidationResult, invalidateKeys } from './invalidation.js'
import { L1Cache } from './l1/l1_cache.js'
import { L2Store, UNAVAILABLE } from './l2/l2_store.js'
import { isNotFound, NOT_FOUND, type NotFound } from './not_found.js'
import {
  type BloomGate,
  type CacheOptions,
  type CallOptions,
  layerCallOptions,
  type ResolvedCacheOptions,
  type ResolvedCallOptions,
  resolveCacheOptions,
} from './options.js'
import { Singleflight } from './singleflight.js'
import { drawTtlMs, jitteredMs } from './ttl.js'

/** Loads one value from the source of truth: the value, or {@link NOT_FOUND}; throws on failure (never cached). */
export type Loader<T> = (key: string) => Promise<T | NotFound> | T | NotFound

/** What a load produced, with the L2 entry it became (for L1). */
type Loaded<T> = T | NotFound

/**
 * A cache-aside cache: L1 (in-process LRU) → Bloom gate → L2 (Redis) → loader,
 * with singleflight per process, a Redis mutex per key across processes,
 * negative caching, TTL jitter, stale-while-revalidate, versioned invalidation
 * broadcast to every instance's L1, and a circuit breaker on Redis.
 * Create with {@link createCache}.
 */
export class Cache<T = unknown> {
  /** Typed events: `outcome`, `breaker`, `background_error`. */
  readonly events = new CacheEventEmitter()
  /** The L2 circuit breaker (its `state` is observable). */
  readonly breaker: CircuitBreaker
  /** This instance's id on the invalidation bus. */
  readonly instanceId = randomBytes(8).toString('hex')
  protected readonly o: ResolvedCacheOptions<T>
  protected readonly codec: Codec<T>
  protected readonly l1: L1Cache<T> | undefined
  protected readonly l2: L2Store
  protected readonly bus: CacheBus
  private readonly waiters = new WakeWaiters()
  private readonly flights = new Singleflight<Loaded<T>>()
  private readonly refreshes = new Singleflight<void>()
  private maxLockTtlMs: number

  constructor(options: CacheOptions<T>) {
    this.o = resolveCacheOptions(options, jsonCodec as Codec<T>)
    this.codec = this.o.codec
    this.maxLockTtlMs = this.o.call.lockTtlMs
    this.breaker = new CircuitBreaker({
      ...this.o.breaker,
      onStateChange: (state, previous) => this.events.emit('breaker', { state, previous }),
    })
    this.l1 = this.o.l1 ? new L1Cache<T>(this.o.l1) : undefined
    const area = `c:${this.o.name}`
    this.l2 = new L2Store(
      this.o.redis,
      new KeySpace(this.o.prefix),
      area,
      this.breaker,
      this.o.redisTimeoutMs,
      (error) => this.count('redis_error', undefined, error),
    )
    this.bus = new CacheBus(this.o.redis, this.l2.wakeChannel, this.l2.busChannel, {
      onFilled: (key) => this.waiters.wake(key),
      onInvalidated: (message) => {
        if (message.from !== this.instanceId) this.l1?.delete(message.keys)
      },
      onReconnected: () => {
        this.l1?.clear()
        this.waiters.wakeAll()
      },
    })
    if (this.o.registry) bindCacheMetrics(this.o.registry, this.o.name, this.events)
  }

  /**
   * Resolves once the client is connected and the bus subscription is in place.
   * Calls made before work too, but they find Redis unavailable (the offline queue is off).
   */
  get ready(): Promise<void> {
    const redis = this.o.redis
    const connected =
      redis.status === 'ready'
        ? Promise.resolve()
        : new Promise<void>((resolve) => redis.once('ready', () => resolve()))
    return Promise.all([connected, this.bus.ready]).then(() => undefined)
  }

  /**
   * Returns the value of `key`, loading it with `loader` on a miss.
   * Order: L1 → Bloom gate → L2 → (stale inside grace: return it, refresh in the
   * background under the mutex) → singleflight → Redis mutex → winner loads and
   * fills; others wait for the fill's wake-up, up to a jittered deadline, then
   * serve stale if they have it or load without writing.
   * @returns the value, or `undefined` when the loader answered {@link NOT_FOUND}.
   * @throws whatever `loader` throws (errors are never cached); {@link InvalidArgumentError} for bad options.
   *   Redis failures are never thrown: the read degrades to L1 and the loader.
   */
  async getOrLoad(key: string, loader: Loader<T>, options?: CallOptions): Promise<T | undefined> {
    const o = layerCallOptions(this.o.call, options)
    const now = Date.now()
    const local = this.l1?.get(key, now)
    if (local !== undefined) {
      this.count(isNotFound(local.value) ? 'negative_hit' : 'l1_hit', key)
      return unwrap(local.value)
    }
    if (o.bloom && !(await this.bloomAllows(o.bloom, [key]))[0]) {
      this.count('bloom_reject', key)
      return undefined
    }
    const epoch = this.l1?.epoch ?? 0
    const raw = await this.l2.read(key)
    const entry = raw === UNAVAILABLE || raw === null ? undefined : await this.decode(key, raw)
    if (entry !== undefined) {
      const value = entryValue(entry)
      if (entry.expiresAtMs > now) {
        this.count(entry.kind === 'negative' ? 'negative_hit' : 'l2_hit', key)
        this.remember(key, entry, o, epoch)
        return unwrap(value)
      }
      if (entry.expiresAtMs + o.staleWhileRevalidateMs > now) {
        this.count('stale_served', key)
        this.refreshInBackground(key, loader, o)
        return unwrap(value)
      }
    }
    const stale = entry === undefined ? undefined : entryValue(entry)
    return unwrap(
      await this.flights.run(key, () => this.loadThroughLock(key, loader, o, raw === UNAVAILABLE, stale)),
    )
  }

  /**
   * A miss: become the loader (Redis mutex), or wait for the one that is.
   * `redisDown`: L2 just failed; load directly and keep the result in L1 only.
   */
  private async loadThroughLock(
    key: string,
    loader: Loader<T>,
    o: ResolvedCallOptions,
    redisDown: boolean,
    stale: Loaded<T> | undefined,
  ): Promise<Loaded<T>> {
    const epoch = this.l1?.epoch ?? 0
    if (redisDown) return this.loadWithoutL2(key, loader, o, epoch)
    this.maxLockTtlMs = Math.max(this.maxLockTtlMs, o.lockTtlMs)
    const token = randomBytes(16).toString('hex')
    const deadline = Date.now() + jitteredMs(o.lockWaitMs, o.lockWaitJitterMs)
    let counted = false
    for (;;) {
      const waiter = this.waiters.register(key)
      const claim = await this.l2.claim(key, token, o.lockTtlMs, 'miss')
      if (claim === UNAVAILABLE) {
        waiter.cancel()
        return this.loadWithoutL2(key, loader, o, epoch)
      }
      if (claim.kind === 'acquired') {
        waiter.cancel()
        return this.loadAndFill(key, loader, o, claim.version, token, epoch)
      }
      if (claim.kind === 'exists') {
        waiter.cancel()
        const raw = await this.l2.read(key)
        const entry = raw === UNAVAILABLE || raw === null ? undefined : await this.decode(key, raw)
        if (entry !== undefined) {
          this.count(entry.kind === 'negative' ? 'negative_hit' : 'l2_hit', key)
          this.remember(key, entry, o, epoch)
          return entryValue(entry)
        }
      } else if (!counted) {
        counted = true
        this.count('lock_wait', key)
      }
      const remainingMs = deadline - Date.now()
      if (remainingMs <= 0) {
        waiter.cancel()
        this.count('wait_timeout', key)
        return stale !== undefined ? stale : this.runLoader(key, loader)
      }
      // Woken by the fill's PUBLISH; otherwise re-claim when the holder's lock expires (it may have died).
      const pttlMs = claim.kind === 'busy' ? claim.pttlMs : 0
      await waiter.woken(Math.min(remainingMs, pttlMs + Math.floor(Math.random() * 20)))
    }
  }

  /** The lock holder: load, then fill-4 (version + token checked, lock released, waiters woken). */
  private async loadAndFill(
    key: string,
    loader: Loader<T>,
    o: ResolvedCallOptions,
    version: string,
    token: string,
    epoch: number,
  ): Promise<Loaded<T>> {
    let value: Loaded<T>
    let envelope: ReturnType<Cache<T>['envelope']>
    try {
      value = await this.runLoader(key, loader)
      envelope = this.envelope(value, o, version)
    } catch (error) {
      await this.l2.abandon(key, token, 0)
      throw error
    }
    const result = await this.l2.fill(
      key,
      envelope.bytes,
      envelope.physicalTtlMs,
      version,
      token,
      envelope.mode,
    )
    if (result === 'written' || result === UNAVAILABLE) this.rememberLoaded(key, value, envelope, o, epoch)
    return value
  }

  /** Redis is unavailable: load (singleflight already applies) and keep the result in L1 only. */
  private async loadWithoutL2(
    key: string,
    loader: Loader<T>,
    o: ResolvedCallOptions,
    epoch: number,
  ): Promise<Loaded<T>> {
    const value = await this.runLoader(key, loader)
    this.rememberLoaded(key, value, this.envelope(value, o, '0'), o, epoch)
    return value
  }

  /** Stale-while-revalidate: one refresh per key per process, one cluster-wide (claim in 'refresh' mode). */
  private refreshInBackground(key: string, loader: Loader<T>, o: ResolvedCallOptions): void {
    if (this.refreshes.has(key)) return
    this.refreshes
      .run(key, async () => {
        const epoch = this.l1?.epoch ?? 0
        const token = randomBytes(16).toString('hex')
        const claim = await this.l2.claim(key, token, o.lockTtlMs, 'refresh')
        if (claim === UNAVAILABLE || claim.kind !== 'acquired') return
        let value: Loaded<T>
        let envelope: ReturnType<Cache<T>['envelope']>
        try {
          value = await this.runLoader(key, loader)
          envelope = this.envelope(value, o, claim.version)
        } catch (error) {
          // Keep serving stale; hold the lock as a back-off so no instance retries at once.
          await this.l2.abandon(key, token, o.refreshBackoffMs)
          throw error
        }
        const result = await this.l2.fill(
          key,
          envelope.bytes,
          envelope.physicalTtlMs,
          claim.version,
          token,
          envelope.mode,
        )
        if (result === 'written') this.rememberLoaded(key, value, envelope, o, epoch)
      })
      .catch((error: unknown) => this.events.emit('background_error', { key, error, task: 'refresh' }))
  }

  /** Calls the loader, timing it for the `load` outcome. */
  protected async runLoader(key: string, loader: Loader<T>): Promise<Loaded<T>> {
    const started = performance.now()
    try {
      return await loader(key)
    } finally {
      this.count('load', key, undefined, performance.now() - started)
    }
  }

  /** Builds the L2 envelope of a loaded value with its TTLs (ms). */
  protected envelope(value: Loaded<T>, o: ResolvedCallOptions, version: string) {
    const now = Date.now()
    if (isNotFound(value)) {
      const expiresAtMs = now + o.negativeTtlMs
      return {
        bytes: encodeNegative(expiresAtMs, version),
        expiresAtMs,
        physicalTtlMs: o.negativeTtlMs,
        mode: 'nx' as const,
      }
    }
    const ttlMs = drawTtlMs(o.ttlMs)
    const expiresAtMs = now + ttlMs
    return {
      bytes: encodeValue(this.codec, value, expiresAtMs, version),
      expiresAtMs,
      physicalTtlMs: ttlMs + o.staleWhileRevalidateMs,
      mode: 'set' as const,
    }
  }

  /** Decodes an L2 entry; a corrupt one is deleted, counted, and reported as a miss. */
  protected async decode(key: string, raw: Buffer): Promise<Envelope<T> | undefined> {
    try {
      return decodeEnvelope(this.codec, raw)
    } catch (error) {
      this.count('corrupt', key, error)
      await this.l2.deleteValue(key)
      return undefined
    }
  }

  /** Puts an L2 entry in L1 unless an invalidation arrived since `epoch`. */
  protected remember(key: string, entry: Envelope<T>, o: ResolvedCallOptions, epoch: number): void {
    if (this.l1 === undefined || this.l1.epoch !== epoch) return
    this.l1.set(
      key,
      { value: entryValue(entry), expiresAtMs: entry.expiresAtMs },
      entry.bytes,
      o.l1TtlMs,
      Date.now(),
    )
  }

  protected rememberLoaded(
    key: string,
    value: Loaded<T>,
    envelope: { bytes: Buffer; expiresAtMs: number },
    o: ResolvedCallOptions,
    epoch: number,
  ): void {
    if (this.l1 === undefined || this.l1.epoch !== epoch) return
    this.l1.set(
      key,
      { value, expiresAtMs: envelope.expiresAtMs },
      envelope.bytes.length,
      o.l1TtlMs,
      Date.now(),
    )
  }

  /** Asks the Bloom gate; any failure answers "maybe" (fail open). */
  protected async bloomAllows(bloom: BloomGate, keys: readonly string[]): Promise<boolean[]> {
    try {
      return await bloom.mightContain(keys)
    } catch {
      return keys.map(() => true)
    }
  }

  /** Emits an outcome (cheaply: nothing is allocated when nobody listens). */
  protected count(outcome: CacheOutcome, key?: string, error?: unknown, durationMs?: number): void {
    if (this.events.listenerCount('outcome') === 0) return
    this.events.emit('outcome', { outcome, key, error, durationMs })
  }

  /** Largest lock TTL (ms) used so far; invalidation versions live twice as long. */
  protected get versionTtlMs(): number {
    return Math.max(2 * this.maxLockTtlMs, 10_000)
  }

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

  /** The L1 tier, for inspection (entries, bytes); undefined when L1 is off. */
  get local(): L1Cache<T> | undefined {
    return this.l1
  }

  /** Closes the bus subscriber connection (the Redis client passed in stays open). */
  close(): void {
    this.bus.close()
  }
}

function entryValue<T>(entry: Envelope<T>): Loaded<T> {
  return entry.kind === 'negative' ? NOT_FOUND : entry.value
}

function unwrap<T>(value: Loaded<T>): T | undefined {
  return isNotFound(value) ? undefined : value
}

/**
 * Creates a cache. See {@link CacheOptions} for every option, its default and unit.
 * @throws {InvalidArgumentError} naming the offending option.
 */
export function createCache<T = unknown>(options: CacheOptions<T>): Cache<T> {
  return new Cache<T>(options)
}

import { randomBytes } from 'node:crypto'
import { CircuitBreaker } from '../circuit_breaker/index.js'
import { STARTUP_DEFAULTS, settleWithin, withinDeadline } from '../deadline/index.js'
import { StoreUnavailableError } from '../errors/index.js'
import { bindCacheMetrics } from '../metrics/index.js'
import { inSpan } from '../observability/index.js'
import { KeySpace } from '../redis/index.js'
import { CacheBus } from './bus/cache_bus.js'
import { WakeWaiters } from './bus/wake_waiters.js'
import { type Codec, jsonCodec } from './codec.js'
import { decodeEnvelope, type Envelope, encodeNegative, encodeValue } from './envelope.js'
import { CacheEventEmitter, type CacheOutcome } from './events.js'
import { L1Cache } from './l1/l1_cache.js'
import { L2Store } from './l2/l2_store.js'
import { isNotFound, NOT_FOUND, type NotFound } from './not_found.js'
import {
  type BloomGate,
  type CacheOptions,
  type ResolvedCacheOptions,
  type ResolvedCallOptions,
  resolveCacheOptions,
} from './options.js'
import { Singleflight } from './singleflight.js'
import { drawTtlMs } from './ttl.js'

/** Loads one value from the source of truth: the value, or {@link NOT_FOUND}; throws on failure (never cached). */
export type Loader<T> = (key: string) => Promise<T | NotFound> | T | NotFound

/** What a load produced. */
export type Loaded<T> = T | NotFound

/**
 * State and helpers shared by the read path and the write path of a cache:
 * the tiers, the bus, the breaker, envelopes, L1 admission (epoch check) and events.
 */
export class CacheCore<T> {
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
  protected readonly waiters = new WakeWaiters()
  protected readonly flights = new Singleflight<Loaded<T>>((key) => this.count('load_joined', key))
  protected readonly refreshes = new Singleflight<void>()
  protected maxLockTtlMs: number

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
      this.o.redisDeadline,
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
   * Resolves once the client is connected and the bus subscription is in place, within
   * `STARTUP_DEFAULTS.waitMs` (2,000 ms); see {@link readyWithin}. Calls made before work too,
   * but they find Redis unavailable (the offline queue is off).
   * @throws {StoreUnavailableError} when Redis is not reachable in time.
   */
  get ready(): Promise<void> {
    return this.readyWithin(STARTUP_DEFAULTS.waitMs)
  }

  /**
   * Like {@link ready}, with its own bound `timeoutMs` (ms).
   * @throws {StoreUnavailableError} when the client or the bus is not ready within `timeoutMs`.
   */
  readyWithin(timeoutMs: number): Promise<void> {
    const redis = this.o.redis
    const connected =
      redis.status === 'ready'
        ? Promise.resolve()
        : new Promise<void>((resolve) => redis.once('ready', () => resolve()))
    return settleWithin(
      Promise.all([connected, this.bus.ready]).then(() => undefined),
      timeoutMs,
      () => new StoreUnavailableError(`cache ${this.o.name}: Redis not ready within ${timeoutMs} ms`),
    )
  }

  /** Calls the loader in a `floodgate.cache.load` span, timing it for the `load` outcome. */
  protected async runLoader(key: string, loader: Loader<T>): Promise<Loaded<T>> {
    const started = performance.now()
    try {
      return await inSpan('floodgate.cache.load', { 'floodgate.cache': this.o.name }, async () => loader(key))
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

  /**
   * Asks the Bloom gate; any failure answers "maybe" (fail open). While the L2 breaker is not
   * closed a remote gate is not asked at all ("maybe" for every key): it lives on Redis too, and a
   * black-holed Redis would otherwise cost every miss the gate's command timeout while L2 reads
   * are skipped. An in-process gate is always asked (its Redis waits have their own deadline).
   */
  protected async bloomAllows(bloom: BloomGate, keys: readonly string[]): Promise<boolean[]> {
    if (bloom.inProcess !== true && this.breaker.state !== 'closed') return keys.map(() => true)
    try {
      // an in-process gate bounds its own Redis waits (sync, fallback query) and never throws
      const answers = bloom.mightContain(keys)
      return await (bloom.inProcess === true
        ? answers
        : withinDeadline(answers, this.o.redisDeadline, 'bloom gate'))
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

  /** The L1 tier, for inspection (entries, bytes); undefined when L1 is off. */
  get local(): L1Cache<T> | undefined {
    return this.l1
  }

  /** Closes the bus subscriber connection (the Redis client passed in stays open). */
  close(): void {
    this.bus.close()
  }
}

export function entryValue<T>(entry: Envelope<T>): Loaded<T> {
  return entry.kind === 'negative' ? NOT_FOUND : entry.value
}

export function unwrap<T>(value: Loaded<T>): T | undefined {
  return isNotFound(value) ? undefined : value
}

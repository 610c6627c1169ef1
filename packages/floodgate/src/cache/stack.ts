import { randomBytes } from 'node:crypto'
import { CircuitBreaker } from '../circuit_breaker/index.js'
import { settleWithin } from '../deadline/index.js'
import { StoreUnavailableError } from '../errors/index.js'
import { bindCacheMetrics } from '../metrics/index.js'
import {
  inSpan,
  type Logger,
  logError,
  type SpanAttributes,
  tracingOn,
  warmTracing,
} from '../observability/index.js'
import { KeySpace } from '../redis/index.js'
import { CacheBus } from './bus/cache_bus.js'
import { type Waiter, WakeWaiters } from './bus/wake_waiters.js'
import { type Codec, jsonCodec } from './codec.js'
import { decodeEnvelope, type Envelope, encodeNegative, encodeValue } from './envelope.js'
import { CacheEventEmitter, type CacheOutcome } from './events.js'
import { type L1Admission, L1Cache } from './l1/l1_cache.js'
import { L2Store, UNAVAILABLE, type Unavailable } from './l2/l2_store.js'
import { MissRate } from './miss_rate.js'
import { NamespaceGenerations } from './namespace/generations.js'
import { userKeyOf } from './namespace/scoped_key.js'
import { isNotFound, NOT_FOUND, type NotFound } from './not_found.js'
import {
  CACHE_DEFAULTS,
  type CacheOptions,
  type ResolvedCacheOptions,
  type ResolvedCallOptions,
  resolveCacheOptions,
} from './options.js'
import { afterPermit } from './permit.js'
import type { ReadClaim } from './scripts.js'
import { Singleflight } from './singleflight.js'
import { drawTtlMs } from './ttl.js'

/** Loads one value from the source of truth: the value, or {@link NOT_FOUND}; throws on failure (never cached). */
export type Loader<T> = (key: string) => Promise<T | NotFound> | T | NotFound

/** What a load produced. */
export type Loaded<T> = T | NotFound

/** An L2 envelope about to be written, with its TTLs (ms) and write mode. */
export interface PendingEnvelope {
  bytes: Buffer
  expiresAtMs: number
  physicalTtlMs: number
  /** `nx` for a negative entry: never written over a real value. */
  mode: 'set' | 'nx'
}

/**
 * An L1 miss's L2 read-claim (`L2Store.readOrClaim`), as its sender saw it: the reply, what its
 * L1 may keep of a value (a tracked read), the epoch it began in, and the wake-up it registered
 * before sending (for a `busy` reply; the others cancel it).
 */
export interface ReadOutcome {
  reply: ReadClaim | Unavailable
  token: string
  admission: L1Admission | undefined
  epoch: number
  waiter: Waiter
}

/**
 * The parts one cache is made of, shared by its readers (`read_one.ts`, `read_many.ts`), its
 * writers and its namespace views: the tiers (L1, L2), the bus, the breaker, the codec, the
 * events, in-process coordination (singleflight, wake-ups, namespace generations), plus the small
 * steps every path uses (envelopes, L1 admission, outcome counting, spans). Ids are keys as
 * `scoped_key.ts` defines them.
 */
export class CacheStack<T> {
  readonly events = new CacheEventEmitter()
  readonly breaker: CircuitBreaker
  readonly instanceId = randomBytes(8).toString('hex')
  readonly o: ResolvedCacheOptions<T>
  readonly codec: Codec<T>
  readonly l1: L1Cache<T> | undefined
  readonly l2: L2Store
  readonly bus: CacheBus
  readonly waiters = new WakeWaiters()
  readonly flights = new Singleflight<Loaded<T>>((id) => this.count('load_joined', id))
  /** L1 misses' L2 read-claims in flight (`read_one.ts`), joined by later misses of the id. */
  readonly reads = new Singleflight<ReadOutcome>()
  readonly refreshes = new Singleflight<void>()
  /** Share of recent L2 reads that missed: whether an L1 miss claims in its read (`read_one.ts`). */
  readonly missRate = new MissRate(CACHE_DEFAULTS.missRateWeight)
  readonly generations: NamespaceGenerations
  private readonly spanAttributes: SpanAttributes
  private maxLockTtlMs: number

  constructor(options: CacheOptions<T>) {
    this.o = resolveCacheOptions(options, jsonCodec as Codec<T>)
    this.codec = this.o.codec
    this.spanAttributes = { 'floodgate.cache': this.o.name }
    this.maxLockTtlMs = this.o.call.lockTtlMs
    this.breaker = new CircuitBreaker({
      ...this.o.breaker,
      onStateChange: (state, previous) => this.events.emit('breaker', { state, previous }),
    })
    // a reconnect says Redis is back: probe it now, not at the end of the cool-down
    this.o.redis.on('ready', this.probeOnReady)
    this.l1 = this.o.l1 ? new L1Cache<T>(this.o.l1) : undefined
    this.l2 = new L2Store(
      this.o.redis,
      new KeySpace(this.o.prefix),
      `c:${this.o.name}`,
      this.breaker,
      this.o.redisDeadline,
      (error) => this.count('redis_error', undefined, error),
      this.o.readBatchMaxKeys,
      // a read after a write (or an announced invalidation) of its id must not join one begun before
      (keys) => {
        this.reads.forget(keys)
        this.flights.forget(keys)
      },
    )
    this.generations = new NamespaceGenerations(this.l2)
    this.bus = new CacheBus(this.o.redis, this.l2.wakeChannel, this.l2.busChannel, {
      onFilled: (id) => this.waiters.wake(id),
      onInvalidated: (message) => {
        if (message.from === this.instanceId) return
        this.l2.forgetSharedReads(message.keys)
        this.l1?.delete(message.keys)
      },
      onCleared: (message) => {
        this.generations.advance(message.namespace, message.generation)
        this.l2.forgetSharedReads()
        this.l1?.delete([])
      },
      onSubscribed: (afterLoss) => {
        if (afterLoss) {
          this.generations.forget()
          this.l2.forgetSharedReads()
          this.l1?.clear()
        }
        // a wake-up published before the SUBSCRIBE was answered never arrives: look again
        this.waiters.wakeAll()
      },
      // the wake-ups they wait for cannot arrive now: they poll until the bus is back
      onLost: () => this.waiters.wakeAll(),
    })
    if (this.o.registry) bindCacheMetrics(this.o.registry, this.o.name, this.events)
    if (this.o.logger) this.logTo(this.o.logger)
    warmTracing()
  }

  private readonly probeOnReady = (): void => this.breaker.probeNow()

  /** Stops listening to the client and closes the bus and L1 (the client stays open). */
  close(): void {
    this.o.redis.off('ready', this.probeOnReady)
    this.bus.close()
    this.l1?.close()
  }

  private logTo(logger: Logger): void {
    const cache = this.o.name
    this.events.on('breaker', ({ state, previous }) => {
      if (state === 'open')
        logger.warn(
          { primitive: 'cache', cache, state, previous },
          `cache ${cache}: L2 breaker open, serving from L1 and the loader without Redis`,
        )
    })
    this.events.on('background_error', ({ key, error, task }) => {
      const fields = { primitive: 'cache', cache, key, task, err: error }
      if (task === 'refresh') logger.warn(fields, `cache ${cache}: background refresh of ${key} failed`)
      else
        logError(
          logger,
          fields,
          `cache ${cache}: ${task} of ${key} given up, entries may stay until their TTL`,
        )
    })
  }

  /**
   * Resolves once the client is connected and the bus subscription is in place, within `timeoutMs` (ms).
   * @throws {StoreUnavailableError} when the client or the bus is not ready in time.
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

  /** Runs one step of a read or write in a `floodgate.cache.<step>` span (see `observability/tracing.ts`). */
  step<R>(step: string, fn: () => Promise<R>): Promise<R> {
    return inSpan(`floodgate.cache.${step}`, this.spanAttributes, fn)
  }

  /**
   * Calls `loader` with the caller's key of `id` (see {@link timedLoad}), once `permit` resolved.
   * @throws `PermitRefused` (`permit.ts`) when `permit` rejects (the loader is not called).
   */
  runLoader(id: string, loader: Loader<T>, permit?: PromiseLike<unknown>): Promise<Loaded<T>> {
    const load = () => this.timedLoad(id, async () => loader(userKeyOf(id)))
    return permit === undefined ? load() : afterPermit(permit).then(load)
  }

  /** Runs a load in a `floodgate.cache.load` span, timed as one `load` outcome (`id` undefined for a batch). */
  async timedLoad<R>(id: string | undefined, fn: () => Promise<R>): Promise<R> {
    const started = performance.now()
    try {
      return await this.step('load', fn)
    } finally {
      this.count('load', id, undefined, performance.now() - started)
    }
  }

  /** Builds the L2 envelope of a loaded value with its TTLs (ms). */
  envelope(value: Loaded<T>, o: ResolvedCallOptions, version: string): PendingEnvelope {
    const now = Date.now()
    if (isNotFound(value)) {
      const expiresAtMs = now + o.negativeTtlMs
      return {
        bytes: encodeNegative(expiresAtMs, version),
        expiresAtMs,
        physicalTtlMs: o.negativeTtlMs,
        mode: 'nx',
      }
    }
    const ttlMs = drawTtlMs(o.ttlMs)
    const expiresAtMs = now + ttlMs
    return {
      bytes: encodeValue(this.codec, value, expiresAtMs, version),
      expiresAtMs,
      physicalTtlMs: ttlMs + o.staleWhileRevalidateMs,
      mode: 'set',
    }
  }

  /** One L2 read in a `floodgate.cache.l2_read` span, decoded: the entry, `undefined` when absent or corrupt. */
  readEntry(id: string): Promise<Envelope<T> | undefined | Unavailable> {
    if (this.l1?.tracks) return this.readTracked(id)
    // never joined: after a claim or a wake-up the value may have landed since a GET in flight
    const read = tracingOn() ? this.step('l2_read', () => this.l2.read(id)) : this.l2.read(id)
    return read.then((raw) => (raw === UNAVAILABLE ? raw : this.decode(id, raw)))
  }

  /** {@link readEntry} on the tracked L1's connection (l1/l1_tracking.ts): its entry may stay in L1. */
  private async readTracked(id: string): Promise<Envelope<T> | undefined | Unavailable> {
    const l1 = this.l1!
    const tracked = l1.beginRead(this.l2.valueKey(id))
    const raw = await this.step('l2_read', () => this.l2.read(id, tracked))
    const admission = l1.settle(tracked)
    if (raw === UNAVAILABLE) return raw
    const entry = await this.decode(id, raw)
    if (entry !== undefined && admission !== undefined) entry.admission = admission
    return entry
  }

  /**
   * The first L2 read of a `getOrLoad`, as bytes (see {@link decode}), in a `floodgate.cache.l2_read`
   * span; concurrent calls for one id share one GET (`L2Store.readShared`).
   */
  readBytes(id: string): Promise<Buffer | null | Unavailable> {
    // no span, no closure for it, when nothing records (an L2 hit is a hot path)
    return tracingOn() ? this.step('l2_read', () => this.l2.readShared(id)) : this.l2.readShared(id)
  }

  /**
   * Decodes an L2 entry, synchronously unless it is corrupt: a corrupt one is counted, deleted,
   * and reported as a miss once the delete is done (a promise of `undefined`).
   */
  decode(id: string, raw: Buffer | null): Envelope<T> | undefined | Promise<undefined> {
    if (raw === null) return undefined
    try {
      return decodeEnvelope(this.codec, raw)
    } catch (error) {
      this.count('corrupt', id, error)
      return this.l2.deleteValue(id).then(() => undefined)
    }
  }

  /** Puts an L2 entry in L1 unless an invalidation arrived since `epoch`. */
  remember(id: string, entry: Envelope<T>, o: ResolvedCallOptions, epoch: number): void {
    this.admit(id, entryValue(entry), entry.expiresAtMs, entry.bytes, o, epoch, entry.admission)
  }

  /** Puts a value this process loaded or wrote in L1 unless an invalidation arrived since `epoch`. */
  rememberLoaded(
    id: string,
    value: Loaded<T>,
    envelope: { bytes: Buffer; expiresAtMs: number },
    o: ResolvedCallOptions,
    epoch: number,
  ): void {
    this.admit(id, value, envelope.expiresAtMs, envelope.bytes.length, o, epoch)
  }

  private admit(
    id: string,
    value: Loaded<T>,
    expiresAtMs: number,
    bytes: number,
    o: ResolvedCallOptions,
    epoch: number,
    admission?: L1Admission,
  ): void {
    if (this.l1 === undefined || this.l1.epoch !== epoch) return
    this.l1.set(id, value, expiresAtMs, bytes, o.l1TtlMs, Date.now(), admission)
  }

  /** The L1 epoch now (0 without L1): taken before a read, checked when its result is admitted. */
  get epoch(): number {
    return this.l1?.epoch ?? 0
  }

  /** Emits an outcome with the caller's key (cheaply: nothing is allocated when nobody listens). */
  count(outcome: CacheOutcome, id?: string, error?: unknown, durationMs?: number): void {
    if (this.events.listenerCount('outcome') === 0) return
    this.events.emit('outcome', {
      outcome,
      key: id === undefined ? undefined : userKeyOf(id),
      error,
      durationMs,
    })
  }

  /** Records a lock TTL (ms) in use, so invalidation versions outlive every lock. */
  noteLockTtl(lockTtlMs: number): void {
    this.maxLockTtlMs = Math.max(this.maxLockTtlMs, lockTtlMs)
  }

  /** Largest lock TTL (ms) used so far; invalidation versions live twice as long. */
  get versionTtlMs(): number {
    return Math.max(2 * this.maxLockTtlMs, 10_000)
  }
}

/** The value an entry stands for ({@link NOT_FOUND} for a negative entry). */
export function entryValue<T>(entry: Envelope<T>): Loaded<T> {
  return entry.kind === 'negative' ? NOT_FOUND : entry.value
}

/** A loaded value as callers see it: `undefined` for not found. */
export function unwrap<T>(value: Loaded<T>): T | undefined {
  return isNotFound(value) ? undefined : value
}

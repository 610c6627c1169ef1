import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { fullJitterDelayMs } from '../backoff/index.js'
import { InvalidArgumentError } from '../errors/index.js'
import { inSpan, type Logger, warmTracing } from '../observability/index.js'
import { awaitFirstConnection, KeySpace, type RedisClient } from '../redis/index.js'
import { positiveInteger, positiveNumber } from '../validation/index.js'
import { LockAbortedError, LockLostError, LockTimeoutError } from './errors.js'
import { type AcquireOutcome, MutexEventEmitter } from './events.js'
import { type Lease, RedisLease } from './lease.js'
import { acquireReply, acquireScript } from './scripts.js'

export interface MutexOptions {
  /** Lock TTL (ms), integer ≥ 1. @default 5000 */
  ttlMs?: number
  /** Renew the lock every `ttlMs / 3` while held (the watchdog). @default false */
  watchdog?: boolean
  /** First retry delay of `acquire()` (ms). @default 5 */
  retryBaseMs?: number
  /** Largest retry delay of `acquire()` (ms). @default 100 */
  retryMaxMs?: number
  /**
   * Lifetime of the fencing counter after the last acquire (ms), integer ≥ `ttlMs`; 0 = forever.
   * Forever keeps tokens strictly increasing for the life of the dataset but leaves one small key
   * per lock name: fine for a few fixed names, a slow leak for per-entity names (`order:<id>`).
   * With a TTL the key goes away after `fenceTtlMs` without an acquire, and the next acquire
   * restarts the tokens at 1: choose it longer than any holder or delayed write can live, or have
   * the protected resource forget tokens at the same pace.
   * @default 0 (forever)
   */
  fenceTtlMs?: number
  /** Emitter for this mutex's events; pass one to share it (and its metrics) across many mutexes. */
  events?: MutexEventEmitter
  /** Warned (`warn`) when a lease ends `lost` or `expired`: the protected work lost its lock. */
  logger?: Logger
}

export interface AcquireOptions {
  /** How long to keep trying (ms); 0 means one attempt. @default 2000 */
  waitMs?: number
  /** Cancels the wait; `acquire()` then rejects with {@link LockAbortedError}. */
  signal?: AbortSignal
}

const defaults = { ttlMs: 5000, watchdog: false, retryBaseMs: 5, retryMaxMs: 100, fenceTtlMs: 0 }
const DEFAULT_WAIT_MS = 2000

/**
 * A distributed mutex on one Redis key, with fencing tokens (see README.md beside this file).
 * Events: `events`; metrics: {@link bindMutexMetrics}.
 *
 * - Acquire: `SET key token NX PX ttl` and `INCR fence` in one Lua step
 *   (`acquire-2.lua`); the token is 128 random bits.
 * - Release: Lua compare-and-delete; extend: Lua compare-and-PEXPIRE that never
 *   re-creates the key, so a late renewal cannot steal a lock.
 * - Fencing token: the fence key is an INCR counter that by default never
 *   expires (one small integer per lock name), so tokens stay strictly
 *   increasing for the life of the Redis dataset; `fenceTtlMs` trades that
 *   for keys that go away (see {@link MutexOptions.fenceTtlMs}). If Redis loses its data (restart without
 *   persistence, failover to a lagging replica) the counter restarts: a
 *   resource that checks fencing tokens must then be told (e.g. by an epoch).
 * - Safety is the single-instance Redis lock's: it holds while the holder's
 *   pauses stay under the TTL; the fencing token covers the rest.
 */
export class Mutex {
  readonly keys: { readonly lock: string; readonly fence: string }
  /** `acquire` and `lease_ended` events (see {@link MutexEvents}); `options.events` when given. */
  readonly events: MutexEventEmitter
  private readonly redis: RedisClient
  private readonly options: Required<Omit<MutexOptions, 'events' | 'logger'>>
  private readonly logger: Logger | undefined

  /**
   * @param keys `lock` and `fence` must share a hash tag (e.g.
   *   `keySpace.tagged('lock', name)` and `keySpace.tagged('lock', name, 'fence')`).
   * @throws {InvalidArgumentError} on a bad option or keys without a common hash tag.
   */
  constructor(redis: RedisClient, keys: { lock: string; fence: string }, options: MutexOptions = {}) {
    this.redis = redis
    this.keys = { lock: keys.lock, fence: keys.fence }
    warmTracing()
    const { events, logger, ...rest } = options
    this.events = events ?? new MutexEventEmitter()
    this.logger = logger
    this.options = { ...defaults, ...stripUndefined(rest) }
    validate(this.options)
    if (hashTag(keys.lock) !== hashTag(keys.fence))
      throw new InvalidArgumentError('keys', 'lock and fence keys must share one hash tag')
  }

  /**
   * A Mutex on `<prefix>:lock:{<name>}` with fence `<prefix>:lock:{<name>}:fence`; `prefix` is a
   * string (as every other primitive's `prefix`) or a {@link KeySpace}.
   * @throws {InvalidArgumentError} on a bad option or an empty prefix.
   */
  static named(redis: RedisClient, prefix: string | KeySpace, name: string, options?: MutexOptions): Mutex {
    const keySpace = typeof prefix === 'string' ? new KeySpace(prefix) : prefix
    const lock = keySpace.tagged('lock', name)
    return new Mutex(redis, { lock, fence: keySpace.tagged('lock', name, 'fence') }, options)
  }

  /**
   * One attempt, one round trip. Resolves null when someone else holds the lock.
   * If the reply is lost (a timeout after the server ran the script) the lock
   * stays taken until its TTL passes.
   * @throws {StoreUnavailableError} on a Redis error or timeout.
   */
  async tryAcquire(): Promise<Lease | null> {
    const token = randomBytes(16).toString('hex')
    const sentAt = Date.now()
    const reply = await inSpan('floodgate.mutex.try_acquire', { 'floodgate.lock': this.keys.lock }, () =>
      acquireScript.run(
        this.redis,
        [this.keys.lock, this.keys.fence],
        [token, this.options.ttlMs, this.options.fenceTtlMs],
      ),
    )
    const fencingToken = acquireReply(reply)
    if (fencingToken === null) return null
    const lease = new RedisLease({
      redis: this.redis,
      lockKey: this.keys.lock,
      token,
      fencingToken,
      ttlMs: this.options.ttlMs,
      sentAt,
      watchdog: this.options.watchdog,
    })
    lease.signal.addEventListener('abort', () => this.leaseEnded(lease.signal.reason), { once: true })
    return lease
  }

  private leaseEnded(reason: unknown): void {
    if (!(reason instanceof LockLostError)) return
    this.events.emit('lease_ended', { lock: this.keys.lock, reason: reason.reason })
    if (reason.reason !== 'released')
      this.logger?.warn(
        { primitive: 'mutex', lock: this.keys.lock, reason: reason.reason, err: reason },
        `mutex ${this.keys.lock}: lease ${reason.reason} while held`,
      )
  }

  /**
   * Tries until it gets the lock or `waitMs` passes. Between attempts it sleeps
   * with capped exponential backoff and full jitter (a uniform draw in
   * [0, min(retryMaxMs, retryBaseMs·2^attempt)]; "Exponential Backoff And
   * Jitter", AWS Architecture Blog, 2015), never past the deadline; one last
   * attempt is made at the deadline. Called before the client's first connection, it first waits
   * for that connection within the same `waitMs` (counted from the client's first use).
   * @throws {LockTimeoutError} (`FLOODGATE_LOCK_TIMEOUT`) when `waitMs` passes.
   * @throws {LockAbortedError} (`FLOODGATE_LOCK_ABORTED`) when `signal` aborts.
   * @throws {StoreUnavailableError} on a Redis error (no retry on errors), or when the first
   *   connection did not come within `waitMs`.
   */
  async acquire(options: AcquireOptions = {}): Promise<Lease> {
    const started = Date.now()
    try {
      const lease = await this.acquireOnce(options)
      this.acquired('acquired', started)
      return lease
    } catch (error) {
      const outcome: AcquireOutcome =
        error instanceof LockTimeoutError
          ? 'timeout'
          : error instanceof LockAbortedError
            ? 'aborted'
            : 'error'
      this.acquired(outcome, started, error)
      throw error
    }
  }

  private acquired(outcome: AcquireOutcome, started: number, error?: unknown): void {
    this.events.emit('acquire', { lock: this.keys.lock, outcome, waitedMs: Date.now() - started, error })
  }

  private async acquireOnce(options: AcquireOptions): Promise<Lease> {
    const waitMs = options.waitMs ?? DEFAULT_WAIT_MS
    if (!Number.isFinite(waitMs) || waitMs < 0)
      throw new InvalidArgumentError('waitMs', 'must be a finite number ≥ 0')
    const { signal } = options
    const started = Date.now()
    const deadline = started + waitMs
    await awaitFirstConnection(this.redis, waitMs)
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new LockAbortedError(this.keys.lock, signal.reason)
      const lease = await this.tryAcquire()
      if (lease) return lease
      const left = deadline - Date.now()
      if (left <= 0) throw new LockTimeoutError(this.keys.lock, Date.now() - started)
      const delay = Math.min(
        left,
        fullJitterDelayMs(attempt, this.options.retryBaseMs, this.options.retryMaxMs),
      )
      try {
        await sleep(delay, undefined, signal ? { signal } : undefined)
      } catch {
        throw new LockAbortedError(this.keys.lock, signal?.reason)
      }
    }
  }

  /**
   * Acquires (as {@link acquire}), runs `fn` with the lease, and releases in
   * every case. `fn` should watch `lease.signal` and pass `lease.fencingToken`
   * to the resource it protects. A failed release is ignored (the key then
   * expires by its TTL), so it never hides `fn`'s result or error.
   * @throws whatever `acquire()` throws, or what `fn` throws.
   */
  async withLock<T>(fn: (lease: Lease) => Promise<T>, options?: AcquireOptions): Promise<T> {
    const lease = await this.acquire(options)
    try {
      return await fn(lease)
    } finally {
      await lease.release().catch(() => undefined)
    }
  }
}

function validate(o: typeof defaults): void {
  if (!Number.isInteger(o.fenceTtlMs) || (o.fenceTtlMs !== 0 && o.fenceTtlMs < o.ttlMs))
    throw new InvalidArgumentError('fenceTtlMs', 'must be 0 (forever) or an integer ≥ ttlMs')
  positiveInteger('ttlMs', o.ttlMs)
  positiveNumber('retryBaseMs', o.retryBaseMs)
  if (!Number.isFinite(o.retryMaxMs) || o.retryMaxMs < o.retryBaseMs)
    throw new InvalidArgumentError('retryMaxMs', 'must be a finite number ≥ retryBaseMs')
}

function stripUndefined<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>
}

/** The hash tag Redis Cluster hashes (the first non-empty `{...}`), or the whole key. */
function hashTag(key: string): string {
  const open = key.indexOf('{')
  if (open >= 0) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) return key.slice(open + 1, close)
  }
  return key
}

import { BREAKER_DEFAULTS } from '../circuit_breaker/index.js'
import { DEADLINE_DEFAULTS, type Deadline } from '../deadline/index.js'
import { InvalidArgumentError } from '../errors/index.js'
import type { MetricsRegistry } from '../metrics/registry.js'
import type { Logger } from '../observability/index.js'
import type { RedisClient } from '../redis/index.js'
import type { ClientTracking } from '../tracking/index.js'
import { nonNegativeInteger, positiveInteger } from '../validation/index.js'
import type { Codec } from './codec.js'

/** A TTL (ms): a fixed number, or a range `{ minMs, maxMs }` from which each write draws uniformly. */
export type TtlMs = number | { minMs: number; maxMs: number }

/**
 * The Bloom gate a key family may put in front of the loader. Any object with
 * this shape works (floodgate's `BloomFilter` and `BloomReplica` have it). It
 * must fail open: answer `true` ("maybe") when it does not know.
 *
 * - A remote gate (`inProcess` not true, e.g. `BloomFilter`) is taken to live on
 *   the cache's Redis: asked only after an L2 miss, and not at all while the L2
 *   circuit breaker is open (or half-open): every key counts as "maybe".
 * - An in-process gate (`inProcess: true`, e.g. `BloomReplica`) answers
 *   "absent" from process memory: asked before L2 (an absent id costs no L2
 *   GET and writes no negative key), whatever the breaker's state.
 */
export interface BloomGate {
  mightContain(items: readonly string[]): Promise<boolean[]>
  /** True when "definitely absent" costs no Redis round trip (see above). @default false */
  readonly inProcess?: boolean
}

/** Options that a single call may override (layered: defaults → cache → call). */
export interface CallOptions {
  /**
   * Logical TTL (ms) of a value in L2, drawn uniformly from the range on every
   * write (spreads expiry to avoid an avalanche); a number means a fixed TTL.
   * @default { minMs: 300_000, maxMs: 600_000 }
   */
  ttlMs?: TtlMs
  /** TTL (ms) of a negative entry (the loader answered not found). @default 60_000 */
  negativeTtlMs?: number
  /**
   * Grace window (ms) after the logical expiry during which the stale value is
   * served at once while one refresh runs cluster-wide (stale-while-revalidate).
   * The physical Redis TTL is logical TTL + this. 0 disables SWR.
   * @default 60_000
   */
  staleWhileRevalidateMs?: number
  /** Wait (ms) before another refresh is tried after a refresh's loader failed (inside grace). @default 5_000 */
  refreshBackoffMs?: number
  /** TTL (ms) of the per-key Redis mutex a loader holds; a load longer than this cannot write. @default 5_000 */
  lockTtlMs?: number
  /** How long (ms) a caller waits for another process's load before loading directly (without writing). @default 2_000 */
  lockWaitMs?: number
  /** Each wait deadline is `lockWaitMs` ± a uniform jitter of up to this many ms (capped at half of `lockWaitMs`). @default 200 */
  lockWaitJitterMs?: number
  /** L1 TTL (ms) for entries this call writes (capped by the value's logical expiry). @default the cache's `l1.ttlMs` */
  l1TtlMs?: number
  /** Bloom gate for this key family; `false` turns a cache-level gate off for this call. @default the cache's `bloom` */
  bloom?: BloomGate | false
  /**
   * Per call only: the loader waits for this promise, and so does the call's answer. The L1 and L2
   * reads, the Bloom gate and the lock claim start at once, so a decision in flight (a rate
   * limiter's Redis round trip) overlaps the cache's own instead of coming before it. When it
   * rejects, nothing is loaded for this call: a lock it took is given back (other processes'
   * waiters are woken), no stale-while-revalidate refresh starts, the calls of the key that joined
   * its load in this process read again on their own, and the call rejects with the reason.
   * It must settle. @default none
   */
  permit?: PromiseLike<unknown>
}

/** L1 (in-process LRU) bounds. */
export interface L1Options {
  /** Default L1 TTL (ms). @default 10_000 */
  ttlMs?: number
  /** Maximum number of entries. @default 10_000 */
  maxEntries?: number
  /** Maximum total bytes (measured as the encoded envelope length). @default 67_108_864 (64 MiB) */
  maxBytes?: number
  /**
   * Server-assisted client-side caching (Redis `CLIENT TRACKING`): single-key L2 reads go on this
   * tracking's connection while it is established, and what they read stays in L1 until Redis
   * invalidates its value key (a write, invalidation, expiry or eviction by any instance), at
   * most `trackedMaxAgeMs`, instead of `ttlMs`: no L2 read for a hot key that does not change.
   * Once the invalidation connection is lost or silent, a tracked entry is served only within
   * `ttlMs` of the last time it was proven fresh (its read, or the tracking's last pong), as an
   * untracked one (invalidations may have been missed);
   * a reply overtaken by an invalidation of its key is not kept; not established (connecting,
   * Redis Cluster, a Redis without tracking): `ttlMs` as without it. The tracking may be shared
   * by several caches (and `LiveCounts`); the cache does not close it. See `cache/l1/l1_tracking.ts`.
   * @default none (entries live `ttlMs`)
   */
  tracking?: ClientTracking
  /**
   * Longest life (ms) of an entry kept because Redis tracks it (also capped by its logical expiry).
   * @default 300_000
   */
  trackedMaxAgeMs?: number
}

/** {@link L1Options} after defaults; `tracking` stays optional. */
export type ResolvedL1Options = Required<Omit<L1Options, 'tracking'>> & {
  tracking: ClientTracking | undefined
}

/** Circuit breaker on L2. */
export interface BreakerOptions {
  /** Consecutive Redis failures that open the breaker. @default 5 */
  failureThreshold?: number
  /**
   * How long (ms) the breaker stays open before letting one probe through, when the client's
   * connection did not come back first: a `ready` of the client (a reconnect) admits the probe at
   * once, so this bounds only a Redis that stays connected but fails or times out.
   * @default 5_000 (`BREAKER_DEFAULTS.coolDownMs`)
   */
  coolDownMs?: number
}

/** Options of {@link createCache}. */
export interface CacheOptions<T = unknown> extends Omit<CallOptions, 'l1TtlMs' | 'permit'> {
  /** The Redis client (single node or cluster); use one made by `createRedisClient` (offline queue off). */
  redis: RedisClient
  /** Name of this cache: part of every key and channel, and the `cache` metric label. Must match `[A-Za-z0-9_.-]+`. */
  name: string
  /** Key prefix. @default 'fg' */
  prefix?: string
  /** Value codec. @default jsonCodec */
  codec?: Codec<T>
  /**
   * Idle event-loop time (ms) a Redis call of the read path gets before it counts as failed
   * (see `withinDeadline`: time the process spent busy elsewhere does not count).
   * @default 50 (`DEADLINE_DEFAULTS.timeoutMs`)
   */
  redisTimeoutMs?: number
  /**
   * Longest wall-clock wait (ms) of a Redis call of the read path, however busy the process; a
   * wait cut here is served like an outage but not counted by the breaker.
   * @default 2_000 (`DEADLINE_DEFAULTS.maxWaitMs`)
   */
  redisMaxWaitMs?: number
  /** L1 settings, or `false` for no L1. @default `CACHE_DEFAULTS.l1`, no tracking */
  l1?: L1Options | false
  /** Circuit breaker on L2. @default { failureThreshold: 5, coolDownMs: 5_000 } */
  breaker?: BreakerOptions
  /** Registry (a prom-client `Registry`) to register the cache metrics in. @default none (events only) */
  registry?: MetricsRegistry
  /** Attempts for a failed L2 invalidation, retried in the background with backoff. @default 5 */
  invalidateRetries?: number
  /**
   * Most ids of one L2 read batch: on a single node, the single-key GETs this cache sends on one
   * connection during one event-loop poll phase leave as one MGET of up to this many keys, and
   * its L1 misses' read-claims (while most recent reads miss) as one `read-claim-n.lua` call (a
   * full batch leaves at once); 1 sends a call per read. Batch reads (`getManyOrLoad`) are one
   * MGET anyway.
   * @default 256
   */
  readBatchMaxKeys?: number
  /**
   * Where the cache logs what needs a human (see {@link Logger}): the L2 breaker opening (warn),
   * a failed background refresh (warn), an invalidation or namespace clear given up (error).
   * @default none (events only)
   */
  logger?: Logger
}

/** Call-level options after layering; every field set. */
export interface ResolvedCallOptions {
  ttlMs: { minMs: number; maxMs: number }
  negativeTtlMs: number
  staleWhileRevalidateMs: number
  refreshBackoffMs: number
  lockTtlMs: number
  lockWaitMs: number
  lockWaitJitterMs: number
  l1TtlMs: number
  bloom: BloomGate | false
  /** The call's {@link CallOptions.permit}; never set at the cache's level. */
  permit: PromiseLike<unknown> | undefined
}

/** The defaults of {@link CacheOptions} and {@link CallOptions}, in one place (ms, bytes). */
export const CACHE_DEFAULTS = {
  prefix: 'fg',
  ttlMs: { minMs: 300_000, maxMs: 600_000 },
  negativeTtlMs: 60_000,
  staleWhileRevalidateMs: 60_000,
  refreshBackoffMs: 5_000,
  lockTtlMs: 5_000,
  lockWaitMs: 2_000,
  lockWaitJitterMs: 200,
  /**
   * While the cache's pub/sub subscription is down no fill's wake-up can arrive: a lock waiter
   * re-claims this often (ms) instead, the older design's 50 ms poll (one claim per waiting key).
   */
  busDownPollMs: 50,
  /**
   * An L1 miss claims the loader lock in its L2 read (`read-claim-n.lua`, one round trip) while
   * at least this share of this cache's recent L2 reads missed, else it sends a plain GET (an L2
   * hit costs ~4× less CPU that way) and claims after a miss. Recent: an exponentially weighted
   * mean, each read weighing {@link missRateWeight}.
   */
  readClaimMissRate: 0.5,
  /** Weight of the newest L2 read in that mean (1/32: about the last 32 reads). */
  missRateWeight: 1 / 32,
  l1: { ttlMs: 10_000, maxEntries: 10_000, maxBytes: 64 * 1024 * 1024, trackedMaxAgeMs: 300_000 },
  breaker: BREAKER_DEFAULTS,
  invalidateRetries: 5,
  readBatchMaxKeys: 256,
} as const

const d = CACHE_DEFAULTS
export const defaultCallOptions: ResolvedCallOptions = {
  ttlMs: { ...d.ttlMs },
  negativeTtlMs: d.negativeTtlMs,
  staleWhileRevalidateMs: d.staleWhileRevalidateMs,
  refreshBackoffMs: d.refreshBackoffMs,
  lockTtlMs: d.lockTtlMs,
  lockWaitMs: d.lockWaitMs,
  lockWaitJitterMs: d.lockWaitJitterMs,
  l1TtlMs: d.l1.ttlMs,
  bloom: false,
  permit: undefined,
}

/** Layers `over` on `base` and validates the result. @throws {InvalidArgumentError} naming the field. */
export function layerCallOptions(
  base: ResolvedCallOptions,
  over: CallOptions | undefined,
): ResolvedCallOptions {
  if (over === undefined) return base
  const merged: ResolvedCallOptions = {
    ttlMs: over.ttlMs === undefined ? base.ttlMs : normalizeTtl(over.ttlMs),
    negativeTtlMs: over.negativeTtlMs ?? base.negativeTtlMs,
    staleWhileRevalidateMs: over.staleWhileRevalidateMs ?? base.staleWhileRevalidateMs,
    refreshBackoffMs: over.refreshBackoffMs ?? base.refreshBackoffMs,
    lockTtlMs: over.lockTtlMs ?? base.lockTtlMs,
    lockWaitMs: over.lockWaitMs ?? base.lockWaitMs,
    lockWaitJitterMs: over.lockWaitJitterMs ?? base.lockWaitJitterMs,
    l1TtlMs: over.l1TtlMs ?? base.l1TtlMs,
    bloom: over.bloom ?? base.bloom,
    permit: over.permit,
  }
  validateCallOptions(merged)
  return merged
}

function normalizeTtl(ttl: TtlMs): { minMs: number; maxMs: number } {
  return typeof ttl === 'number' ? { minMs: ttl, maxMs: ttl } : { minMs: ttl.minMs, maxMs: ttl.maxMs }
}

export function validateCallOptions(o: ResolvedCallOptions): void {
  positiveInteger('ttlMs.minMs', o.ttlMs.minMs)
  positiveInteger('ttlMs.maxMs', o.ttlMs.maxMs)
  if (o.ttlMs.maxMs < o.ttlMs.minMs) throw new InvalidArgumentError('ttlMs.maxMs', 'must be ≥ ttlMs.minMs')
  positiveInteger('negativeTtlMs', o.negativeTtlMs)
  nonNegativeInteger('staleWhileRevalidateMs', o.staleWhileRevalidateMs)
  nonNegativeInteger('refreshBackoffMs', o.refreshBackoffMs)
  positiveInteger('lockTtlMs', o.lockTtlMs)
  positiveInteger('lockWaitMs', o.lockWaitMs)
  nonNegativeInteger('lockWaitJitterMs', o.lockWaitJitterMs)
  positiveInteger('l1TtlMs', o.l1TtlMs)
}

/** Resolved cache-level settings. */
export interface ResolvedCacheOptions<T> {
  redis: RedisClient
  name: string
  prefix: string
  codec: Codec<T>
  /** Deadline of every L2 call (ms). */
  redisDeadline: Deadline
  l1: ResolvedL1Options | false
  breaker: Required<BreakerOptions>
  registry: MetricsRegistry | undefined
  logger: Logger | undefined
  invalidateRetries: number
  readBatchMaxKeys: number
  call: ResolvedCallOptions
}

/** Applies defaults to {@link CacheOptions} and validates. @throws {InvalidArgumentError} naming the field. */
export function resolveCacheOptions<T>(
  options: CacheOptions<T>,
  jsonDefault: Codec<T>,
): ResolvedCacheOptions<T> {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', 'required')
  if (options.redis === undefined || options.redis === null)
    throw new InvalidArgumentError('redis', 'required')
  if (typeof options.name !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(options.name)) {
    throw new InvalidArgumentError('name', 'must match [A-Za-z0-9_.-]+')
  }
  const call = layerCallOptions(defaultCallOptions, {
    ...options,
    l1TtlMs: undefined,
    permit: undefined,
  } as CallOptions)
  const l1: ResolvedL1Options | false =
    options.l1 === false
      ? false
      : {
          ttlMs: options.l1?.ttlMs ?? d.l1.ttlMs,
          maxEntries: options.l1?.maxEntries ?? d.l1.maxEntries,
          maxBytes: options.l1?.maxBytes ?? d.l1.maxBytes,
          tracking: options.l1?.tracking,
          trackedMaxAgeMs: options.l1?.trackedMaxAgeMs ?? d.l1.trackedMaxAgeMs,
        }
  if (l1) {
    positiveInteger('l1.ttlMs', l1.ttlMs)
    positiveInteger('l1.maxEntries', l1.maxEntries)
    positiveInteger('l1.maxBytes', l1.maxBytes)
    positiveInteger('l1.trackedMaxAgeMs', l1.trackedMaxAgeMs)
    call.l1TtlMs = l1.ttlMs
  }
  const breaker = {
    failureThreshold: options.breaker?.failureThreshold ?? d.breaker.failureThreshold,
    coolDownMs: options.breaker?.coolDownMs ?? d.breaker.coolDownMs,
  }
  positiveInteger('breaker.failureThreshold', breaker.failureThreshold)
  positiveInteger('breaker.coolDownMs', breaker.coolDownMs)
  const redisTimeoutMs = options.redisTimeoutMs ?? DEADLINE_DEFAULTS.timeoutMs
  positiveInteger('redisTimeoutMs', redisTimeoutMs)
  const redisMaxWaitMs = options.redisMaxWaitMs ?? Math.max(DEADLINE_DEFAULTS.maxWaitMs, redisTimeoutMs)
  if (!Number.isInteger(redisMaxWaitMs) || redisMaxWaitMs < redisTimeoutMs)
    throw new InvalidArgumentError(
      'redisMaxWaitMs',
      `must be an integer ≥ redisTimeoutMs (${redisTimeoutMs} ms)`,
    )
  const invalidateRetries = options.invalidateRetries ?? d.invalidateRetries
  nonNegativeInteger('invalidateRetries', invalidateRetries)
  const readBatchMaxKeys = positiveInteger('readBatchMaxKeys', options.readBatchMaxKeys ?? d.readBatchMaxKeys)
  return {
    redis: options.redis,
    name: options.name,
    prefix: options.prefix ?? d.prefix,
    codec: options.codec ?? jsonDefault,
    redisDeadline: { timeoutMs: redisTimeoutMs, maxWaitMs: redisMaxWaitMs },
    l1,
    breaker,
    registry: options.registry,
    logger: options.logger,
    invalidateRetries,
    readBatchMaxKeys,
    call,
  }
}

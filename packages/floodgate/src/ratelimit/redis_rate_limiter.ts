import { checkDeadline, DEADLINE_DEFAULTS, STARTUP_DEFAULTS, withinDeadline } from '../deadline/index.js'
import { InvalidArgumentError, StoreUnavailableError } from '../errors/index.js'
import { inSpan, type Logger, LogThrottle, tracingOn, warmTracing } from '../observability/index.js'
import { KeySpace } from '../redis/key_space.js'
import { awaitFirstConnection, connectedOnce } from '../redis/startup_gate.js'
import type { RedisClient } from '../redis/types.js'
import { nonEmptyString, positiveInteger, share } from '../validation/index.js'
import { BlockedCache } from './blocked_cache.js'
import { RATE_LIMIT_DEFAULTS } from './defaults.js'
import { RateLimiterEventEmitter } from './events.js'
import { type DecisionSink, ExactDecider } from './exact_decider.js'
import { type RateLimitFallback, resolveFallback } from './fallback.js'
import { LEASED_ALGORITHMS, type LeasedAlgorithm, leaseGrantKeys } from './lease/lease_script.js'
import { LeasedDecider } from './lease/leased_decider.js'
import { type PolicyOptions, resolvePolicy } from './policy.js'
import { peekRateLimit, rateLimitKeys } from './redis_scripts.js'
import type { LimitOptions, RateLimiter, RateLimitPeek, RateLimitResult } from './types.js'

/**
 * How a Redis limiter decides:
 * - `exact`: one Redis script call per decision;
 * - `leased`: decisions come from a slice of the key's quota reserved in Redis beforehand, one
 *   Redis call per slice (window algorithms only); see {@link RateLimiterOptions.lease}.
 */
export type RateLimitMode = 'exact' | 'leased'

/** Options of the leased mode. */
export interface LeaseOptions {
  /**
   * Share of the quota nobody holds that one lease reserves (at least the request's cost), in
   * (0, 1]. Larger: fewer Redis calls; more quota held unused by instances that stop getting traffic.
   * @default 0.25 (`RATE_LIMIT_DEFAULTS.leaseFraction`)
   */
  fraction?: number
  /**
   * Most keys holding a slice in this process (LRU); an evicted slice is given back.
   * @default 10_000 (`RATE_LIMIT_DEFAULTS.maxKeys`)
   */
  maxKeys?: number
  /**
   * `true`: the decision that spends a key's slice sends the key's next lease call at once, in the
   * background, so the key's next decision finds a slice instead of waiting for Redis. The process
   * still holds at most one slice per key, but takes it before it is asked for: if the key's
   * traffic stops there, the slice stays held until its window ends, it is evicted or
   * {@link RedisRateLimiter.release} gives it back. `limitLocal()` may then start that Redis call.
   * @default false (`RATE_LIMIT_DEFAULTS.leasePrefetch`)
   */
  prefetch?: boolean
}

/** Shortest time between two fallback log lines of one source, per limiter (ms). */
export const FALLBACK_LOG_INTERVAL_MS = 10_000

/** Options of {@link createRateLimiter}. Units: ms for every duration. */
export interface RateLimiterOptions extends PolicyOptions {
  /** A client made with `createRedisClient` (offline queue off), single node or cluster. Redis ≥ 7.0 (`PEXPIRETIME`). */
  redis: RedisClient
  /** Key prefix (or a KeySpace); keys are `<prefix>:rl:{<name>:<key>}:<suffix>`. */
  prefix: string | KeySpace
  /**
   * Answer while Redis is unreachable or slower than `timeoutMs`; see {@link RateLimitFallback}.
   * @default 'failOpen'
   */
  fallback?: RateLimitFallback
  /**
   * Idle event-loop time (ms) one decision waits for Redis before the fallback answers. Time the
   * process spent busy elsewhere does not count (`withinDeadline`): a decision that is late only
   * because this process was saturated still comes from Redis, so the quota stays exact.
   * @default 50 (`DEADLINE_DEFAULTS.timeoutMs`)
   */
  timeoutMs?: number
  /**
   * Longest wall-clock wait (ms) of one decision, however busy the process; past it the fallback answers.
   * @default 2_000 (`DEADLINE_DEFAULTS.maxWaitMs`), or `timeoutMs` if larger
   */
  maxWaitMs?: number
  /**
   * Remember keys Redis rejected with nothing left until their retry time, answering them
   * in-process (`source: 'blockedCache'`) without a Redis call. `true` = at most
   * `RATE_LIMIT_DEFAULTS.maxKeys` (10,000) keys.
   * @default false
   */
  blockedCache?: boolean | { maxKeys: number }
  /** Called with each store error the fallback absorbed (for logs and metrics). */
  onStoreError?: (error: StoreUnavailableError) => void
  /**
   * Start-up bound (ms): a decision asked before the client's first connection waits for it this
   * long, counted from the client's first use by any primitive, instead of meeting a disconnected
   * client (offline queue off) and falling back at once. Past it, the fallback answers.
   * @default 2_000 (`STARTUP_DEFAULTS.waitMs`)
   */
  startupWaitMs?: number
  /**
   * Warned (`warn`) on fallback decisions, with `key`, `source`, the error and `suppressed` (lines
   * skipped before this one): at most one line per fallback source per
   * {@link FALLBACK_LOG_INTERVAL_MS}; events and metrics count every decision.
   */
  logger?: Logger
  /**
   * `'leased'`: decide from slices of each key's quota reserved in Redis (`fixedWindow` and
   * `slidingWindow` only): no Redis call while a key's slice lasts, never more admitted per window
   * than the exact mode admits, at the price of quota other instances hold unused
   * (`src/ratelimit/README.md`, "Leased mode"). Refused keys are always remembered in this mode
   * (`blockedCache: false` is ignored; `{ maxKeys }` sizes it).
   * @default 'exact'
   */
  mode?: RateLimitMode
  /** Leased mode tuning; ignored in exact mode. */
  lease?: LeaseOptions
  /**
   * Most limiter keys one Redis script call decides: the decisions (exact mode) or the lease calls
   * (leased mode) asked during one event-loop poll phase leave as one call, so one write, one reply
   * and one deadline serve them all; a full batch leaves at once. On a Cluster only the decisions of
   * one key share a call (a script never spans slots). 1: one call per decision.
   * @default 256 (`RATE_LIMIT_DEFAULTS.batchMaxKeys`)
   */
  batchMaxKeys?: number
}

/** A rate limiter on Redis; `events` reports each decision and each fallback. */
export interface RedisRateLimiter extends RateLimiter {
  readonly events: RateLimiterEventEmitter
  /**
   * The quota left for `key` without consuming it (a read-only script per algorithm, nothing
   * written). No fallback: a guess would be worse than an error.
   * @throws {StoreUnavailableError} when Redis is unreachable or slower than the deadline.
   * @throws {InvalidArgumentError} `key` empty.
   */
  peek(key: string): Promise<RateLimitPeek>
  /**
   * Gives `key` its full quota back (deletes its state in one UNLINK; the keys share a hash tag)
   * and forgets its in-process block.
   * @throws {StoreUnavailableError} when Redis is unreachable or slower than the deadline.
   * @throws {InvalidArgumentError} `key` empty.
   */
  reset(key: string): Promise<void>
  /**
   * Leased mode: gives the unused units of every slice this process holds back to Redis (call it
   * on shutdown, so other instances can use them before their window ends). Exact mode: nothing.
   * Never throws: units that could not be given back expire with their window.
   * @returns the units given back.
   */
  release(): Promise<number>
}

/**
 * A distributed rate limiter on Redis: one EVALSHA per decision, batched per event-loop poll phase
 * (`batchMaxKeys`), time from Redis `TIME`,
 * a rejected request consumes nothing, a cost above the limit (or burst) is rejected with
 * `retryAfterMs: -1`. Algorithms and their sources are documented in `lua/*.lua`:
 * fixed window, sliding log, sliding window counter (Cloudflare 2017), token bucket,
 * GCRA (Brandur Leach 2015 / redis-cell).
 *
 * `limit()` never throws for a store failure: the fallback policy answers (failClosed
 * answers `allowed: false`). It throws InvalidArgumentError for a bad key or cost, and
 * ScriptContractError if a script breaks its contract (a bug, not an outage).
 *
 * `limitLocal()` answers synchronously from the leased slice or a remembered block, else
 * `undefined` (then call `limit()`): the hot path of a request hook without a promise.
 *
 * A fallback answer is never silent: it emits `fallback` on `events`, calls `onStoreError`, warns
 * `logger` (throttled: {@link FALLBACK_LOG_INTERVAL_MS}), and counts in `floodgate_ratelimit_decisions_total` ({@link bindRateLimiterMetrics}).
 *
 * @throws {InvalidArgumentError} naming the bad option (`limit`, `windowMs`, `burst`, `timeoutMs`,
 *   `startupWaitMs`, `batchMaxKeys`, `fallback…`).
 */
export function createRateLimiter(options: RateLimiterOptions): RedisRateLimiter {
  const policy = resolvePolicy(options)
  warmTracing()
  const keySpace = typeof options.prefix === 'string' ? new KeySpace(options.prefix) : options.prefix
  const timeoutMs = positiveInteger('timeoutMs', options.timeoutMs ?? DEADLINE_DEFAULTS.timeoutMs)
  const deadline = checkDeadline('rateLimiter', {
    timeoutMs,
    maxWaitMs: options.maxWaitMs ?? Math.max(DEADLINE_DEFAULTS.maxWaitMs, timeoutMs),
  })
  const fallback = resolveFallback(options.fallback ?? 'failOpen', policy)
  const mode = options.mode ?? 'exact'
  if (mode !== 'exact' && mode !== 'leased')
    throw new InvalidArgumentError('mode', `must be 'exact' or 'leased', got ${String(mode)}`)
  if (mode === 'leased' && !LEASED_ALGORITHMS.includes(policy.algorithm as LeasedAlgorithm))
    throw new InvalidArgumentError(
      'mode',
      `'leased' runs ${LEASED_ALGORITHMS.join(', ')}, not ${policy.algorithm}`,
    )
  const blockedOption = options.blockedCache ?? mode === 'leased'
  const blocked =
    blockedOption === false
      ? undefined
      : new BlockedCache(
          blockedOption === true
            ? RATE_LIMIT_DEFAULTS.maxKeys
            : positiveInteger('blockedCache.maxKeys', blockedOption.maxKeys),
        )
  const startupWaitMs = positiveInteger('startupWaitMs', options.startupWaitMs ?? STARTUP_DEFAULTS.waitMs)
  const maxBatch = positiveInteger('batchMaxKeys', options.batchMaxKeys ?? RATE_LIMIT_DEFAULTS.batchMaxKeys)
  const { redis, onStoreError, logger } = options
  const logThrottle = new LogThrottle<string>(FALLBACK_LOG_INTERVAL_MS)
  const events = new RateLimiterEventEmitter()
  const spanName = 'floodgate.ratelimit.decide'
  const spanAttributes = { 'floodgate.policy': policy.name, 'floodgate.algorithm': policy.algorithm }
  const leasedSpanAttributes = { ...spanAttributes, 'floodgate.mode': 'leased' }
  const what = `rate limiter ${policy.name} (${policy.algorithm})`
  const leased =
    mode === 'leased'
      ? new LeasedDecider({
          redis: options.redis,
          keySpace,
          policy,
          fraction: share('lease.fraction', options.lease?.fraction ?? RATE_LIMIT_DEFAULTS.leaseFraction),
          maxKeys: positiveInteger('lease.maxKeys', options.lease?.maxKeys ?? RATE_LIMIT_DEFAULTS.maxKeys),
          maxBatch,
          deadline,
          what,
          blocked: blocked ?? new BlockedCache(RATE_LIMIT_DEFAULTS.maxKeys),
          prefetch: (options.lease?.prefetch ?? RATE_LIMIT_DEFAULTS.leasePrefetch) === true,
        })
      : undefined
  const exact =
    leased === undefined ? new ExactDecider({ redis, keySpace, policy, maxBatch, deadline, what }) : undefined
  /** Set once the client has been ready: the start-up wait is then skipped by a flag test. */
  let started = false

  const decided = (key: string, result: RateLimitResult): RateLimitResult => {
    // no event object per decision while nobody listens (the in-process answers' hot path)
    if (events.listenerCount('decision') !== 0)
      events.emit('decision', { key, source: result.source, allowed: result.allowed })
    return result
  }
  /** The fallback's answer after `error`, reported (events, `onStoreError`, throttled log). */
  const fellBack = (key: string, cost: number, error: StoreUnavailableError): RateLimitResult => {
    onStoreError?.(error)
    const result = fallback(key, cost)
    events.emit('fallback', { key, source: result.source, allowed: result.allowed, error })
    const suppressed = logger === undefined ? undefined : logThrottle.admit(result.source)
    if (suppressed !== undefined) {
      logger?.warn(
        { primitive: 'rateLimiter', policy: policy.name, key, source: result.source, suppressed, err: error },
        `rate limiter ${policy.name}: Redis unavailable, ${result.source} answered`,
      )
    }
    return decided(key, result)
  }
  const sink: DecisionSink = {
    fromRedis(key, cost, result) {
      blocked?.remember(key, cost, result, Date.now())
      return decided(key, result)
    },
    fromFallback: fellBack,
  }
  /** The leased mode's: its decider stores slices and blocks itself. */
  const leasedSink: DecisionSink = {
    fromRedis: (key, _cost, result) => decided(key, result),
    fromFallback: fellBack,
  }
  const orFallback = (key: string, cost: number, error: unknown): RateLimitResult => {
    if (!(error instanceof StoreUnavailableError)) throw error
    return fellBack(key, cost, error)
  }
  /** Redis's answer (or the fallback's) for a decision memory could not make. */
  const remote = (key: string, cost: number): Promise<RateLimitResult> => {
    const decider = (leased ?? exact) as ExactDecider | LeasedDecider
    if (!tracingOn())
      return new Promise((resolve, reject) =>
        decider.decide(key, cost, resolve, reject, leased === undefined ? sink : leasedSink),
      )
    // traced: the span covers the Redis call alone and records its error, as before batching
    return inSpan(
      spanName,
      leased === undefined ? spanAttributes : leasedSpanAttributes,
      () => new Promise<RateLimitResult>((resolve, reject) => decider.decide(key, cost, resolve, reject)),
    ).then(
      (result) => (leased === undefined ? sink : leasedSink).fromRedis(key, cost, result),
      (error: unknown) => orFallback(key, cost, error),
    )
  }
  /** The answer from memory (leased slice, remembered block), reported as decided; `cost` already validated. */
  const local = (key: string, cost: number): RateLimitResult | undefined => {
    const cached = leased ? leased.local(key, cost) : blocked?.check(key, policy, Date.now())
    return cached === undefined ? undefined : decided(key, cached)
  }
  /** Sends the queued script calls now, so a command sent next runs after them. */
  const flush = () => (leased ?? (exact as ExactDecider)).flush()
  const validCost = (callOptions: LimitOptions | undefined): number =>
    callOptions?.cost === undefined ? 1 : positiveInteger('cost', callOptions.cost)
  return {
    policy,
    events,
    async peek(key): Promise<RateLimitPeek> {
      nonEmptyString('key', key)
      await awaitFirstConnection(redis, startupWaitMs)
      flush() // the decisions asked before this read go first
      const read = await withinDeadline(peekRateLimit(redis, keySpace, policy, key), deadline, what)
      return { limit: policy.limit, ...read, policy }
    },
    async reset(key): Promise<void> {
      nonEmptyString('key', key)
      blocked?.forget(key)
      leased?.forget(key)
      await awaitFirstConnection(redis, startupWaitMs)
      // the leased mode's grant records too: a cancel must not give a grant from before the reset back
      const keys = [...rateLimitKeys(keySpace, policy, key), ...leaseGrantKeys(keySpace, policy, key)]
      flush() // the decisions asked before the reset count before it, as they did when they were asked
      const unlink = redis.unlink(...keys).catch((error: unknown) => {
        throw new StoreUnavailableError(`${what}: reset failed`, { cause: error })
      })
      await withinDeadline(unlink, deadline, what)
    },
    release: async () => (leased ? leased.release() : 0),
    limitLocal(key, callOptions): RateLimitResult | undefined {
      nonEmptyString('key', key)
      return local(key, validCost(callOptions))
    },
    limit(key, callOptions): Promise<RateLimitResult> {
      let cost: number
      try {
        nonEmptyString('key', key)
        cost = validCost(callOptions)
        const cached = local(key, cost)
        if (cached !== undefined) return Promise.resolve(cached)
      } catch (error) {
        return Promise.reject(error)
      }
      if (!started) {
        started = connectedOnce(redis)
        if (!started) return awaitFirstConnection(redis, startupWaitMs).then(() => remote(key, cost))
      }
      return remote(key, cost)
    },
  }
}

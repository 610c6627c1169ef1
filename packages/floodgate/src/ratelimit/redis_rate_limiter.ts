import { checkDeadline, DEADLINE_DEFAULTS, withinDeadline } from '../deadline/index.js'
import { StoreUnavailableError } from '../errors/index.js'
import { KeySpace } from '../redis/key_space.js'
import type { RedisClient } from '../redis/types.js'
import { BlockedCache } from './blocked_cache.js'
import { type RateLimitFallback, resolveFallback } from './fallback.js'
import { type PolicyOptions, resolvePolicy } from './policy.js'
import { prepareRateLimitScript } from './redis_scripts.js'
import type { RateLimiter, RateLimitResult } from './types.js'
import { nonEmptyString, positiveInteger } from './validate.js'

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
   * in-process (`source: 'blockedCache'`) without a Redis call. `true` = at most 10,000 keys.
   * @default false
   */
  blockedCache?: boolean | { maxKeys: number }
  /** Called with each store error the fallback absorbed (for logs and metrics). */
  onStoreError?: (error: StoreUnavailableError) => void
}

/**
 * A distributed rate limiter on Redis: one EVALSHA per decision, time from Redis `TIME`,
 * a rejected request consumes nothing, a cost above the limit (or burst) is rejected with
 * `retryAfterMs: -1`. Algorithms and their sources are documented in `lua/*.lua`:
 * fixed window, sliding log, sliding window counter (Cloudflare 2017), token bucket,
 * GCRA (Brandur Leach 2015 / redis-cell).
 *
 * `limit()` never throws for a store failure: the fallback policy answers (failClosed
 * answers `allowed: false`). It throws InvalidArgumentError for a bad key or cost, and
 * ScriptContractError if a script breaks its contract (a bug, not an outage).
 *
 * @throws {InvalidArgumentError} naming the bad option (`limit`, `windowMs`, `burst`, `timeoutMs`, `fallback…`).
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const policy = resolvePolicy(options)
  const keySpace = typeof options.prefix === 'string' ? new KeySpace(options.prefix) : options.prefix
  const timeoutMs = positiveInteger('timeoutMs', options.timeoutMs ?? DEADLINE_DEFAULTS.timeoutMs)
  const deadline = checkDeadline('rateLimiter', {
    timeoutMs,
    maxWaitMs: options.maxWaitMs ?? Math.max(DEADLINE_DEFAULTS.maxWaitMs, timeoutMs),
  })
  const fallback = resolveFallback(options.fallback ?? 'failOpen', policy)
  const blockedOption = options.blockedCache ?? false
  const blocked =
    blockedOption === false
      ? undefined
      : new BlockedCache(
          blockedOption === true ? 10_000 : positiveInteger('blockedCache.maxKeys', blockedOption.maxKeys),
        )
  const { redis, onStoreError } = options
  const what = `rate limiter ${policy.name} (${policy.algorithm})`
  const decide = prepareRateLimitScript(keySpace, policy)

  return {
    policy,
    async limit(key, callOptions): Promise<RateLimitResult> {
      nonEmptyString('key', key)
      const cost = callOptions?.cost === undefined ? 1 : positiveInteger('cost', callOptions.cost)
      const cached = blocked?.check(key, policy, Date.now())
      if (cached) return cached
      try {
        const decision = await withinDeadline(decide(redis, key, cost), deadline, what)
        const result: RateLimitResult = {
          allowed: decision.allowed,
          limit: policy.limit,
          remaining: decision.remaining,
          resetAtMs: decision.resetAtMs,
          retryAfterMs: decision.retryAfterMs,
          nowMs: decision.nowMs,
          policy,
          source: 'redis',
        }
        blocked?.remember(key, cost, result, Date.now())
        return result
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) throw error
        onStoreError?.(error)
        return fallback(key, cost)
      }
    },
  }
}

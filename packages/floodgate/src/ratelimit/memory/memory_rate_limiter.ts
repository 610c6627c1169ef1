import { LRUCache } from 'lru-cache'
import { nonEmptyString, positiveInteger } from '../../validation/index.js'
import { RATE_LIMIT_DEFAULTS } from '../defaults.js'
import { type PolicyOptions, resolvePolicy } from '../policy.js'
import type {
  LimitOptions,
  MemoryRateLimitAlgorithm,
  RateLimiter,
  RateLimitResult,
  RateLimitSource,
} from '../types.js'
import { decideSlidingWindow, type SlidingWindowState } from './sliding_window.js'
import { decideTokenBucket, type TokenBucketState } from './token_bucket.js'

/** Options of {@link createMemoryRateLimiter}. */
export interface MemoryRateLimiterOptions extends PolicyOptions<MemoryRateLimitAlgorithm> {
  /**
   * Most keys kept; the least recently used key is evicted beyond it (an evicted key starts fresh, full quota).
   * @default 10_000 (`RATE_LIMIT_DEFAULTS.maxKeys`)
   */
  maxKeys?: number
  /**
   * Clock (ms since epoch). Tests inject a fake one.
   * @default Date.now
   */
  now?: () => number
}

/** An in-process limiter: one process's view only (use Redis for a shared quota). */
export interface MemoryRateLimiter extends RateLimiter {
  /** Synchronous decision; `limit()` wraps it in a promise. Same errors as `limit()`. */
  check(key: string, options?: LimitOptions): RateLimitResult
  /** Keys currently held (≤ `maxKeys`). */
  readonly size: number
}

type State = TokenBucketState | SlidingWindowState

/**
 * An in-memory token bucket or sliding window counter, bounded by an LRU of at
 * most `maxKeys` keys (lru-cache). For single-instance use, and as the insurance
 * limiter of a Redis limiter while Redis is unreachable.
 * @throws {InvalidArgumentError} naming `algorithm`, `limit`, `windowMs`, `burst`, `name` or `maxKeys`.
 */
export function createMemoryRateLimiter(options: MemoryRateLimiterOptions): MemoryRateLimiter {
  return createMemoryLimiterWithSource(options, 'memory')
}

/** {@link createMemoryRateLimiter} with the `source` its results carry (`insurance` for the fallback). */
export function createMemoryLimiterWithSource(
  options: MemoryRateLimiterOptions,
  source: RateLimitSource,
): MemoryRateLimiter {
  const policy = resolvePolicy(options, ['slidingWindow', 'tokenBucket'])
  const maxKeys = positiveInteger('maxKeys', options.maxKeys ?? RATE_LIMIT_DEFAULTS.maxKeys)
  const now = options.now ?? Date.now
  const states = new LRUCache<string, State>({ max: maxKeys })
  const bucket = policy.algorithm === 'tokenBucket'

  const check = (key: string, callOptions: LimitOptions = {}): RateLimitResult => {
    nonEmptyString('key', key)
    const cost = positiveInteger('cost', callOptions.cost ?? 1)
    const state = states.get(key)
    const nowMs = now()
    const { decision, next } = bucket
      ? decideTokenBucket(state as TokenBucketState | undefined, policy, cost, nowMs)
      : decideSlidingWindow(state as SlidingWindowState | undefined, policy, cost, nowMs)
    if (next) states.set(key, next)
    return { ...decision, limit: policy.limit, policy, source }
  }

  return {
    policy,
    check,
    // every decision is in memory: never undefined
    limitLocal: check,
    limit: async (key, callOptions) => check(key, callOptions),
    get size() {
      return states.size
    },
  }
}

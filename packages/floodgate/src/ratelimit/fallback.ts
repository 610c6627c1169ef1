import { InvalidArgumentError } from '../errors/index.js'
import { positiveInteger, share } from '../validation/index.js'
import { RATE_LIMIT_DEFAULTS } from './defaults.js'
import { createMemoryLimiterWithSource, type MemoryRateLimiter } from './memory/memory_rate_limiter.js'
import type { RateLimitPolicy, RateLimitResult } from './types.js'

/**
 * What a Redis limiter answers while Redis is unreachable (error or timeout):
 * - `'failOpen'`: admit (`allowed: true`, `remaining: limit`, `source: 'failOpen'`);
 * - `'failClosed'`: reject (`allowed: false`, `retryAfterMs: min(windowMs, 1000)`, `source: 'failClosed'`);
 * - `{ insurance: { share, maxKeys } }`: an in-memory limiter per instance with
 *   `max(1, floor(limit × share))` units per window (token bucket for `tokenBucket`/`gcra`,
 *   sliding window counter otherwise), `source: 'insurance'`. With N instances, `share: 1 / N`
 *   keeps the cluster-wide total near the quota; give a function (e.g. `() => 1 / liveInstances()`)
 *   to follow N as instances come and go (read at each fallback decision; a new value starts a
 *   fresh in-memory limiter). Pattern from rate-limiter-flexible's insurance limiter.
 */
export type RateLimitFallback =
  | 'failOpen'
  | 'failClosed'
  | {
      insurance: {
        /**
         * Share of the quota this instance admits on its own, in (0, 1]; or a function read at each
         * fallback decision (a value outside (0, 1] then counts as 1).
         */
        share: number | (() => number)
        /**
         * Most keys the in-memory limiter keeps (LRU).
         * @default 10_000 (`RATE_LIMIT_DEFAULTS.maxKeys`)
         */
        maxKeys?: number
      }
    }

export type FallbackDecider = (key: string, cost: number) => RateLimitResult

/**
 * Validates a fallback option into a decider.
 * @throws {InvalidArgumentError} `fallback`, `fallback.insurance.share` or `fallback.insurance.maxKeys`.
 */
export function resolveFallback(fallback: RateLimitFallback, policy: RateLimitPolicy): FallbackDecider {
  if (fallback === 'failOpen' || fallback === 'failClosed') {
    const allowed = fallback === 'failOpen'
    return (_key, cost) => {
      const nowMs = Date.now()
      return {
        allowed,
        limit: policy.limit,
        remaining: allowed ? Math.max(0, policy.limit - cost) : 0,
        resetAtMs: nowMs + policy.windowMs,
        retryAfterMs: allowed ? 0 : Math.min(policy.windowMs, 1000),
        nowMs,
        policy,
        source: fallback,
      }
    }
  }
  if (typeof fallback !== 'object' || fallback === null || typeof fallback.insurance !== 'object') {
    throw new InvalidArgumentError('fallback', "must be 'failOpen', 'failClosed' or { insurance: { share } }")
  }
  const option = fallback.insurance.share
  const currentShare =
    typeof option === 'function'
      ? () => validShare(option())
      : constant(share('fallback.insurance.share', option))
  const maxKeys = positiveInteger(
    'fallback.insurance.maxKeys',
    fallback.insurance.maxKeys ?? RATE_LIMIT_DEFAULTS.maxKeys,
  )
  const bucket = policy.algorithm === 'tokenBucket' || policy.algorithm === 'gcra'
  const build = (fraction: number): MemoryRateLimiter =>
    createMemoryLimiterWithSource(
      {
        name: policy.name,
        algorithm: bucket ? 'tokenBucket' : 'slidingWindow',
        limit: Math.max(1, Math.floor(policy.limit * fraction)),
        windowMs: policy.windowMs,
        burst: Math.max(1, Math.floor(policy.burst * fraction)),
        maxKeys,
      },
      'insurance',
    )
  let fraction = currentShare()
  let insurance = build(fraction)
  return (key, cost) => {
    const now = currentShare()
    if (now !== fraction) {
      fraction = now
      insurance = build(now)
    }
    return insurance.check(key, { cost })
  }
}

function constant(value: number): () => number {
  return () => value
}

function validShare(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= 1 ? value : 1
}

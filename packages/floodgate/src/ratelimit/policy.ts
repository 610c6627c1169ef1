import { InvalidArgumentError } from '../errors/index.js'
import { nonEmptyString, positiveInteger } from '../validation/index.js'
import { RATE_LIMIT_ALGORITHMS, type RateLimitAlgorithm, type RateLimitPolicy } from './types.js'

/** The options every limiter shares. */
export interface PolicyOptions<A extends RateLimitAlgorithm = RateLimitAlgorithm> {
  algorithm: A
  /** Units admitted per window (token bucket, GCRA: units refilled per window). Integer ≥ 1. */
  limit: number
  /** Window length (ms), integer ≥ 1. */
  windowMs: number
  /**
   * Token bucket and GCRA: units admitted at once from idle (bucket capacity). Integer ≥ 1. Ignored by window algorithms.
   * @default limit
   */
  burst?: number
  /**
   * Policy name (IETF `RateLimit-Policy` name; also part of every Redis key, so two limiters never share state).
   * @default the algorithm name
   */
  name?: string
}

/**
 * Validates the shared options into a policy.
 * @throws {InvalidArgumentError} naming `algorithm`, `limit`, `windowMs`, `burst` or `name`.
 */
export function resolvePolicy<A extends RateLimitAlgorithm>(
  options: PolicyOptions<A>,
  allowed: readonly A[] = RATE_LIMIT_ALGORITHMS as readonly A[],
): RateLimitPolicy {
  if (!allowed.includes(options.algorithm)) {
    throw new InvalidArgumentError(
      'algorithm',
      `must be one of ${allowed.join(', ')}, got ${String(options.algorithm)}`,
    )
  }
  const limit = positiveInteger('limit', options.limit)
  const windowMs = positiveInteger('windowMs', options.windowMs)
  const bucket = options.algorithm === 'tokenBucket' || options.algorithm === 'gcra'
  const burst = bucket && options.burst !== undefined ? positiveInteger('burst', options.burst) : limit
  const name = options.name === undefined ? options.algorithm : nonEmptyString('name', options.name)
  if (/["\\]/.test(name))
    throw new InvalidArgumentError('name', 'must not contain a double quote or backslash')
  return Object.freeze({ name, algorithm: options.algorithm, limit, windowMs, burst })
}

import { setTimeout as sleep } from 'node:timers/promises'
import { FloodgateError, InvalidArgumentError } from '../errors/index.js'
import { RATE_LIMIT_DEFAULTS } from './defaults.js'
import type { LimitOptions, RateLimiter, RateLimitResult } from './types.js'

/** Options of {@link waitUntilAllowed}. */
export interface WaitUntilAllowedOptions extends LimitOptions {
  /**
   * Longest total wait (ms) before giving up with {@link RateLimitWaitError}; a rejection whose
   * `retryAfterMs` would end past it gives up at once instead of sleeping in vain.
   * @default 10_000 (`RATE_LIMIT_DEFAULTS.maxWaitMs`)
   */
  maxWaitMs?: number
  /** Cancels the wait; the call then rejects with the signal's reason. */
  signal?: AbortSignal
}

/**
 * The wait ended without an admission. `code`: `FLOODGATE_RATE_LIMIT_WAIT`; `last` is the last
 * rejection (its `retryAfterMs` is -1 when the cost can never fit).
 */
export class RateLimitWaitError extends FloodgateError {
  constructor(
    readonly last: RateLimitResult,
    readonly waitedMs: number,
  ) {
    super(
      'FLOODGATE_RATE_LIMIT_WAIT',
      last.retryAfterMs < 0
        ? `cost exceeds the ${last.policy.name} limit: it can never be admitted`
        : `not admitted by ${last.policy.name} within the wait (waited ${waitedMs} ms, next try in ${last.retryAfterMs} ms)`,
    )
  }
}

/**
 * Blocks until `limiter` admits `key` (for queues and background jobs, not request paths): asks,
 * and on a rejection sleeps its `retryAfterMs` (plus up to 10% jitter so waiters do not retry in
 * lockstep), then asks again.
 * @returns the admitting result.
 * @throws {RateLimitWaitError} when the next try would fall past `maxWaitMs`, or the cost can never fit.
 * @throws the signal's reason when `signal` aborts.
 * @throws {InvalidArgumentError} `maxWaitMs` not a finite number ≥ 0.
 */
export async function waitUntilAllowed(
  limiter: RateLimiter,
  key: string,
  options: WaitUntilAllowedOptions = {},
): Promise<RateLimitResult> {
  const maxWaitMs = options.maxWaitMs ?? RATE_LIMIT_DEFAULTS.maxWaitMs
  if (!Number.isFinite(maxWaitMs) || maxWaitMs < 0)
    throw new InvalidArgumentError('maxWaitMs', 'must be a finite number ≥ 0 (ms)')
  const { signal } = options
  const started = Date.now()
  for (;;) {
    signal?.throwIfAborted()
    const result = await limiter.limit(key, options.cost === undefined ? undefined : { cost: options.cost })
    if (result.allowed) return result
    const waitedMs = Date.now() - started
    const delayMs = Math.ceil(result.retryAfterMs * (1 + Math.random() * 0.1))
    if (result.retryAfterMs < 0 || waitedMs + result.retryAfterMs > maxWaitMs)
      throw new RateLimitWaitError(result, waitedMs)
    await sleep(Math.min(delayMs, maxWaitMs - waitedMs), undefined, signal ? { signal } : undefined).catch(
      () => {
        throw signal?.reason
      },
    )
  }
}

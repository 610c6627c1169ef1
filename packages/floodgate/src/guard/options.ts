import { integerAtLeast } from '../validation/index.js'

/** Options of {@link ConcurrencyGuard}. */
export interface GuardOptions {
  /** Name in error messages and the `guard` metric label. @default 'guard' */
  name?: string
  /** Calls running at once; more wait in the queue. Integer ≥ 1. */
  maxConcurrent: number
  /** Calls waiting for a slot; one more is shed with reason `queue_full`. Integer ≥ 0. @default 4 × maxConcurrent */
  maxQueue?: number
  /** Longest wait (ms) in the queue; past it the call is shed with reason `queue_timeout`. Integer ≥ 1. @default 1_000 */
  maxQueueWaitMs?: number
  /** Back-off hint (ms) carried by every {@link OverloadedError} (`Retry-After`). Integer ≥ 1. @default maxQueueWaitMs */
  retryAfterMs?: number
}

/** {@link GuardOptions} with every default applied. */
export type ResolvedGuardOptions = Required<GuardOptions>

/** The defaults of {@link GuardOptions}, in one place (a service documents its derived defaults from these). */
export const GUARD_DEFAULTS = {
  /** `name`. */
  name: 'guard',
  /** `maxQueue` = this × `maxConcurrent`. */
  queuePerSlot: 4,
  /** `maxQueueWaitMs` (ms). */
  maxQueueWaitMs: 1_000,
} as const

/**
 * Applies the defaults and checks the ranges.
 * @throws {InvalidArgumentError} when a number is not an integer in its range.
 */
export function resolveGuardOptions(options: GuardOptions): ResolvedGuardOptions {
  const maxQueueWaitMs = options.maxQueueWaitMs ?? GUARD_DEFAULTS.maxQueueWaitMs
  const resolved = {
    name: options.name ?? GUARD_DEFAULTS.name,
    maxConcurrent: options.maxConcurrent,
    maxQueue: options.maxQueue ?? GUARD_DEFAULTS.queuePerSlot * options.maxConcurrent,
    maxQueueWaitMs,
    retryAfterMs: options.retryAfterMs ?? maxQueueWaitMs,
  }
  for (const [field, min] of [
    ['maxConcurrent', 1],
    ['maxQueue', 0],
    ['maxQueueWaitMs', 1],
    ['retryAfterMs', 1],
  ] as const) {
    integerAtLeast(field, resolved[field], min)
  }
  return resolved
}

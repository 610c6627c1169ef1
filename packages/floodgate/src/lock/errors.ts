import { FloodgateError } from '../errors/index.js'

/** `acquire()` did not get the lock within `waitMs`. `code`: `FLOODGATE_LOCK_TIMEOUT`. */
export class LockTimeoutError extends FloodgateError {
  /** How long the caller waited (ms). */
  readonly waitedMs: number

  constructor(lockKey: string, waitedMs: number) {
    super('FLOODGATE_LOCK_TIMEOUT', `lock ${lockKey} not acquired within ${waitedMs} ms`)
    this.waitedMs = waitedMs
  }
}

/** `acquire()` was cancelled by its `signal`; `cause` is the signal's reason. `code`: `FLOODGATE_LOCK_ABORTED`. */
export class LockAbortedError extends FloodgateError {
  constructor(lockKey: string, reason: unknown) {
    super('FLOODGATE_LOCK_ABORTED', `acquiring lock ${lockKey} was aborted`, { cause: reason })
  }
}

/**
 * Why a {@link Lease}'s signal was aborted:
 * - `lost`: a renewal (`extend()` or the watchdog) found another token or no key;
 * - `expired`: the TTL passed without a successful renewal (local clock), or the
 *   watchdog kept failing on Redis errors until the TTL would have passed;
 * - `released`: the holder called `release()`.
 */
export type LeaseEndReason = 'lost' | 'expired' | 'released'

/**
 * The reason set on a lease's `signal` when it aborts. Its `code` is
 * `FLOODGATE_LOCK_LOST` for `lost` and `expired`, `FLOODGATE_LOCK_RELEASED`
 * for `released`; `cause` carries the last Redis error when the watchdog gave up.
 */
export class LockLostError extends FloodgateError {
  readonly reason: LeaseEndReason

  constructor(lockKey: string, reason: LeaseEndReason, options?: { cause?: unknown }) {
    super(
      reason === 'released' ? 'FLOODGATE_LOCK_RELEASED' : 'FLOODGATE_LOCK_LOST',
      `lock ${lockKey} ${reason === 'lost' ? 'lost: held by another token or gone' : reason}`,
      options,
    )
    this.reason = reason
  }
}

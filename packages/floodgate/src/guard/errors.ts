import { FloodgateError } from '../errors/index.js'

/** Why a call was shed: the queue was full on arrival, or the call waited `maxQueueWaitMs` without a slot. */
export type ShedReason = 'queue_full' | 'queue_timeout'

/** Every value of {@link ShedReason} (also the `reason` label of the metric). */
export const SHED_REASONS: readonly ShedReason[] = ['queue_full', 'queue_timeout']

/**
 * A {@link ConcurrencyGuard} shed the call: its function never ran.
 * `code`: `FLOODGATE_OVERLOADED`.
 */
export class OverloadedError extends FloodgateError {
  readonly reason: ShedReason
  /** How long (ms) the caller should wait before retrying (an HTTP service's `Retry-After`). */
  readonly retryAfterMs: number

  constructor(guard: string, reason: ShedReason, retryAfterMs: number) {
    super(
      'FLOODGATE_OVERLOADED',
      `guard ${guard} is overloaded (${reason === 'queue_full' ? 'queue full' : 'waited too long for a slot'})`,
    )
    this.reason = reason
    this.retryAfterMs = retryAfterMs
  }
}

/** The caller's signal aborted while the call waited for a slot; `cause` is the signal's reason. `code`: `FLOODGATE_GUARD_ABORTED`. */
export class GuardAbortedError extends FloodgateError {
  constructor(guard: string, reason: unknown) {
    super('FLOODGATE_GUARD_ABORTED', `waiting for a slot of guard ${guard} was aborted`, { cause: reason })
  }
}

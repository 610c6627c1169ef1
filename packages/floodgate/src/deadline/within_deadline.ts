import { integerAtLeast, positiveInteger } from '../validation/index.js'
import { type DeadlineQueue, deadlineQueue, type Watched } from './deadline_queue.js'
import { loopIdleMs } from './idle_clock.js'
import { RedisTimeoutError } from './redis_timeout_error.js'

/** A deadline measured on the event loop's idle clock. Units: ms. */
export interface Deadline {
  /** Idle event-loop time (ms) Redis gets to answer; see {@link withinDeadline}. */
  timeoutMs: number
  /** Longest wall-clock wait (ms), however busy the process. Must be ≥ `timeoutMs`. */
  maxWaitMs: number
}

/**
 * Checks a deadline's numbers.
 * @throws {InvalidArgumentError} naming `<field>.timeoutMs` or `<field>.maxWaitMs`.
 */
export function checkDeadline(field: string, deadline: Deadline): Deadline {
  const { timeoutMs, maxWaitMs } = deadline
  positiveInteger(`${field}.timeoutMs`, timeoutMs)
  integerAtLeast(`${field}.maxWaitMs`, maxWaitMs, timeoutMs)
  return deadline
}

/**
 * ioredis' own `commandTimeout` error (the client-wide hard cap), also as the `cause` of the
 * StoreUnavailableError a script call (LuaScript) rejects with.
 */
function isClientTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  if (error.message === 'Command timed out') return true
  return error.cause instanceof Error && error.cause.message === 'Command timed out'
}

/**
 * Settles like `call`, or rejects with {@link RedisTimeoutError} when the deadline passes —
 * measured so that a busy process does not blame Redis:
 *
 * - The call times out once the event loop has been **idle** for `timeoutMs` since it was sent
 *   (libuv idle time, {@link loopIdleMs}) without the reply: the process was free to read a reply
 *   and none came (`loopStalled: false`, an outage).
 * - Time the loop spent running other callbacks does not count: a reply that arrived then sat in
 *   the socket until the loop came round. Past `maxWaitMs` of wall-clock time the call gives up
 *   anyway (`loopStalled: true`, this process stalled).
 * - When the timer fires it first lets one poll phase run (`setImmediate`), since timers run
 *   before I/O in a loop iteration: a reply that landed while the loop was blocked wins.
 * - Calls under the same deadline numbers share one timer ({@link DeadlineQueue}): a call costs
 *   a promise and an entry in a FIFO, not a timer of its own.
 *
 * An ioredis `commandTimeout` rejection is reported the same way (stalled when the idle time was
 * short of `timeoutMs`). The late outcome of `call` is observed (no unhandled rejection).
 */
export function withinDeadline<T>(call: Promise<T>, deadline: Deadline, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => watchDeadline(call, deadline, what, resolve, reject))
}

/**
 * {@link withinDeadline} with callbacks in place of a promise of its own, for callers that map
 * the outcome anyway (one promise and one hop fewer): exactly one of `onValue` and `onError` is
 * called, once, as `withinDeadline` would settle.
 */
export function watchDeadline<T>(
  call: Promise<T>,
  deadline: Deadline,
  what: string,
  onValue: (value: T) => void,
  onError: (error: unknown) => void,
): void {
  const queue = deadlineQueue(deadline.timeoutMs, deadline.maxWaitMs)
  const watched = new WatchedCall(what, onError)
  queue.add(watched)
  call.then(
    (value) => {
      if (watched.settled) return
      watched.settled = true
      queue.trim()
      onValue(value)
    },
    (error: unknown) => {
      if (watched.settled) return
      if (isClientTimeout(error)) {
        watched.expire(loopIdleMs() - watched.idleAtStartMs < deadline.timeoutMs, error)
      } else {
        watched.settled = true
        onError(error)
      }
      queue.trim()
    },
  )
}

/** A call under {@link watchDeadline}: fails with {@link RedisTimeoutError} when it expires. */
class WatchedCall implements Watched {
  readonly startedMs = performance.now()
  readonly idleAtStartMs = loopIdleMs()
  settled = false

  constructor(
    private readonly what: string,
    private readonly fail: (error: unknown) => void,
  ) {}

  expire(loopStalled: boolean, cause?: unknown): void {
    if (this.settled) return
    this.settled = true
    const idleMs = loopIdleMs() - this.idleAtStartMs
    this.fail(
      new RedisTimeoutError(this.what, performance.now() - this.startedMs, idleMs, loopStalled, cause),
    )
  }
}

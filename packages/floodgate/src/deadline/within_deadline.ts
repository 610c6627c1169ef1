import { integerAtLeast, positiveInteger } from '../validation/index.js'
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

/** ioredis' own `commandTimeout` error (the client-wide hard cap). */
function isClientTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Command timed out'
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
 *
 * An ioredis `commandTimeout` rejection is reported the same way (stalled when the idle time was
 * short of `timeoutMs`). The late outcome of `call` is observed (no unhandled rejection).
 */
export function withinDeadline<T>(call: Promise<T>, deadline: Deadline, what: string): Promise<T> {
  const startedMs = performance.now()
  const idleAtStart = loopIdleMs()
  return new Promise<T>((resolve, reject) => {
    let settled = false
    const fail = (loopStalled: boolean, cause?: unknown) => {
      if (settled) return
      settled = true
      reject(
        new RedisTimeoutError(
          what,
          performance.now() - startedMs,
          loopIdleMs() - idleAtStart,
          loopStalled,
          cause,
        ),
      )
    }
    const check = () => {
      const waitedMs = performance.now() - startedMs
      const idleMs = loopIdleMs() - idleAtStart
      if (idleMs >= deadline.timeoutMs || waitedMs >= deadline.maxWaitMs) {
        const stalled = idleMs < deadline.timeoutMs
        setImmediate(() => fail(stalled))
        return
      }
      const nextMs = Math.min(deadline.timeoutMs - idleMs, deadline.maxWaitMs - waitedMs)
      timer = setTimeout(check, Math.max(1, Math.ceil(nextMs)))
    }
    let timer = setTimeout(check, deadline.timeoutMs)
    call.then(
      (value) => {
        clearTimeout(timer)
        if (settled) return
        settled = true
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        if (!isClientTimeout(error)) {
          if (settled) return
          settled = true
          reject(error)
          return
        }
        fail(loopIdleMs() - idleAtStart < deadline.timeoutMs, error)
      },
    )
  })
}

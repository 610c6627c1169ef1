import { StoreUnavailableError } from '../errors/index.js'

/**
 * A Redis call passed its deadline (see {@link withinDeadline}). `code`: `FLOODGATE_STORE_UNAVAILABLE`
 * (it is a {@link StoreUnavailableError}: fallbacks answer as for any outage).
 *
 * `loopStalled` tells who was late: `false` when the event loop sat idle for the whole
 * `timeoutMs` and no reply came (Redis is slow or unreachable: count it against Redis, e.g. in a
 * circuit breaker); `true` when the wait ran out `maxWaitMs` while this process was too busy to
 * have read a reply (the process stalled, not Redis: do not count it).
 */
export class RedisTimeoutError extends StoreUnavailableError {
  /** Wall-clock time (ms) from the call to the timeout. */
  readonly waitedMs: number
  /** Time (ms) of that wait during which the event loop was idle. */
  readonly idleMs: number
  readonly loopStalled: boolean

  constructor(what: string, waitedMs: number, idleMs: number, loopStalled: boolean, cause?: unknown) {
    const why = loopStalled
      ? `the event loop was busy (idle ${Math.round(idleMs)} ms of ${Math.round(waitedMs)} ms)`
      : `no reply within ${Math.round(idleMs)} ms of idle event loop`
    super(`${what} timed out: ${why}`, cause === undefined ? undefined : { cause })
    this.waitedMs = waitedMs
    this.idleMs = idleMs
    this.loopStalled = loopStalled
  }
}

/**
 * Whether an error of a Redis call says something about Redis (a reply error, a closed
 * connection, a timeout the idle loop cannot explain) rather than about this busy process.
 * Feed only these to a circuit breaker.
 */
export function countsAgainstRedis(error: unknown): boolean {
  return !(error instanceof RedisTimeoutError && error.loopStalled)
}

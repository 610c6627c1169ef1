import type { FastifyBaseLogger } from 'fastify'
import { LogThrottle } from 'floodgate'

/** Shortest time (ms) between two lines of one {@link OutageReason}, as floodgate's own fallbacks log. */
export const DB_OUTAGE_LOG_INTERVAL_MS = 10_000

/**
 * What the service did because PostgreSQL could not be reached: `request` answered 503
 * `UNAVAILABLE`; `user-check` accepted a write on its signed token without asking whether the
 * user exists (src/auth/known_users.ts).
 */
export type OutageReason = 'request' | 'user-check'

const messages: Record<OutageReason, string> = {
  request: 'PostgreSQL cannot be reached: answering 503 UNAVAILABLE where it is needed',
  'user-check': 'PostgreSQL cannot be reached: accepting writes on the signed token without the user check',
}

/**
 * A PostgreSQL outage is a dependency failing, not a request bug: one `warn` line per reason per
 * {@link DB_OUTAGE_LOG_INTERVAL_MS}, carrying the error (`err`) and how many were skipped since the
 * last line (`suppressed`), instead of an `error` line per request.
 */
export class DatabaseOutageLog {
  private readonly throttle = new LogThrottle<OutageReason>(DB_OUTAGE_LOG_INTERVAL_MS)

  /** Logs `error` on `log` (a request's logger: the line names the request) unless throttled. */
  note(log: FastifyBaseLogger, reason: OutageReason, error: unknown): void {
    const suppressed = this.throttle.admit(reason)
    if (suppressed !== undefined)
      log.warn({ err: error, dependency: 'postgresql', reason, suppressed }, messages[reason])
  }
}

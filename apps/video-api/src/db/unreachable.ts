import { StoreUnavailableError } from 'floodgate'

/**
 * `Retry-After` (s) of a 503 `UNAVAILABLE` answered because PostgreSQL cannot be reached: a
 * refused connection costs the service microseconds, and a restart takes seconds, so clients come
 * back soon and see the database return within about a second.
 */
export const DB_UNREACHABLE_RETRY_AFTER_S = 1

/** Socket errors of a connection that could not be made or was lost (Node's `code`). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/**
 * SQLSTATEs of a server that will not serve this connection (PostgreSQL manual, appendix A):
 * `57P01` admin_shutdown (`pg_ctl stop -m fast`, `pg_terminate_backend`), `57P02` crash_shutdown,
 * `57P03` cannot_connect_now ("the database system is starting up / shutting down"), `53300`
 * too_many_connections; class `08` (connection exception) is matched by prefix.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300'])

/** node-postgres' (pg, pg-pool 8.x) errors for a lost or impossible connection, which carry no code. */
const DRIVER_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
]

/**
 * Whether `error` says PostgreSQL cannot be reached right now (refused, reset or timed-out
 * connection, a server shutting down or starting up, a full connection table), as opposed to a
 * bad statement or bad data. Looks through `cause` chains and `AggregateError.errors` (Node's
 * happy-eyeballs connect reports each address's failure), at most 8 levels deep, but not into
 * floodgate's `StoreUnavailableError`: that is Redis failing, whose socket errors look the same.
 */
export function isDatabaseUnreachable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 8 || error instanceof StoreUnavailableError)
    return false
  const { code, message, cause, errors } = error as {
    code?: unknown
    message?: unknown
    cause?: unknown
    errors?: unknown
  }
  if (
    typeof code === 'string' &&
    (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))
  )
    return true
  if (typeof message === 'string' && DRIVER_MESSAGES.some((m) => message.startsWith(m))) return true
  if (Array.isArray(errors) && errors.some((e) => isDatabaseUnreachable(e, depth + 1))) return true
  return isDatabaseUnreachable(cause, depth + 1)
}

import { FloodgateError } from '../errors/index.js'

/**
 * A stream entry that is not a valid interaction event (missing or malformed
 * fields). It can never apply: the flush leaves it pending and dead-letters it
 * after `maxDeliveries`. `code`: `FLOODGATE_INVALID_EVENT`.
 */
export class InvalidEventError extends FloodgateError {
  readonly eventId: string

  constructor(eventId: string, message: string) {
    super('FLOODGATE_INVALID_EVENT', `event ${eventId}: ${message}`)
    this.eventId = eventId
  }
}

/**
 * Poison or transient? Poison — the data itself can never apply — is an
 * {@link InvalidEventError} or a PostgreSQL error of SQLSTATE class 22 (data
 * exception, e.g. out of range) or 23 (integrity constraint violation, e.g. a
 * foreign key to a deleted user). Everything else (connection refused or
 * reset, admin shutdown, deadlock, serialization failure, a missing table) is
 * treated as transient: retried with backoff, never dead-lettered.
 */
export function isPoisonError(error: unknown): boolean {
  if (error instanceof InvalidEventError) return true
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^(22|23)[0-9A-Z]{3}$/.test(code)
}

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

/**
 * A write ran on the master but fewer replicas than `waitForReplicas.replicas`
 * confirmed it within `waitForReplicas.timeoutMs` (Redis `WAIT`). The change
 * may survive or may be lost if the master dies now: do not acknowledge it to
 * the user as durable. Retrying is safe: likes and favourites are absolute
 * states, and a retried play is not counted twice (the dedupe marker of the
 * first attempt answers `counted: false`; if the first attempt was lost with
 * its master, the retry counts it). `code`: `FLOODGATE_REPLICATION_TIMEOUT`.
 */
export class ReplicationTimeoutError extends FloodgateError {
  /** Replicas that confirmed the write (WAIT's answer). */
  readonly acknowledgedReplicas: number
  /** Replicas required (`waitForReplicas.replicas`). */
  readonly requiredReplicas: number

  constructor(acknowledgedReplicas: number, requiredReplicas: number, timeoutMs: number) {
    super(
      'FLOODGATE_REPLICATION_TIMEOUT',
      `${acknowledgedReplicas} of ${requiredReplicas} required replicas confirmed the write within ${timeoutMs} ms`,
    )
    this.acknowledgedReplicas = acknowledgedReplicas
    this.requiredReplicas = requiredReplicas
  }
}

/**
 * The item was forgotten (`Interactions.forget`: deleted or unpublished) and its tombstone
 * still stands: the toggle or play changed nothing and created no key. A service answers it as
 * "no such item" (404). `code`: `FLOODGATE_ITEM_GONE`.
 */
export class ItemGoneError extends FloodgateError {
  readonly itemId: string

  constructor(itemId: string) {
    super('FLOODGATE_ITEM_GONE', `item ${itemId} was forgotten (deleted): its interactions are refused`)
    this.itemId = itemId
  }
}

import { FloodgateError } from '../errors/index.js'

/** A rebuild stopped before it finished: its lock was lost (Redis lost its data again, or a pause outlived the TTL) or it was stopped. `code`: `FLOODGATE_REBUILD_ABORTED`. */
export class RebuildAbortedError extends FloodgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('FLOODGATE_REBUILD_ABORTED', message, options)
  }
}

/** A PostgreSQL query of the counters failed. `code`: `FLOODGATE_DATABASE_ERROR`. */
export class CountersDatabaseError extends FloodgateError {
  constructor(what: string, cause: unknown) {
    super('FLOODGATE_DATABASE_ERROR', `${what}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    })
  }
}

/** Runs a query, wrapping a driver error in {@link CountersDatabaseError}. */
export async function guardSql<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw new CountersDatabaseError(what, error)
  }
}

import { ConcurrencyGuard, type GuardOptions, type SqlExecutor } from 'floodgate'
import { fields } from '../config/fields.js'
import type { Config } from '../config/types.js'

/** Settings of the database guard; unset numbers take floodgate's defaults (`GUARD_DEFAULTS`). */
export type DbGuardSettings = Partial<Omit<GuardOptions, 'name' | 'retryAfterMs'>>

/**
 * The instance's guard in front of the read path's PostgreSQL work, named `db`
 * (the `guard` label on /metrics). `maxConcurrent` defaults to DB_POOL_MAX's default.
 * @throws {InvalidArgumentError} on a setting out of range.
 */
export function createDbGuard(settings: DbGuardSettings = {}): ConcurrencyGuard {
  return new ConcurrencyGuard({
    ...settings,
    name: 'db',
    maxConcurrent: settings.maxConcurrent ?? Number(fields.dbPoolMax.default),
  })
}

/** DB_GUARD_* from the validated config; DB_GUARD_MAX_CONCURRENT unset = DB_POOL_MAX. */
export function dbGuardFromConfig(config: Config): DbGuardSettings {
  return {
    maxConcurrent: config.dbGuardMaxConcurrent ?? config.dbPoolMax,
    maxQueue: config.dbGuardMaxQueue,
    maxQueueWaitMs: config.dbGuardQueueTimeoutMs,
  }
}

/** `sql` with every statement run through `guard` (a shed statement throws `OverloadedError`). */
export function guardedExecutor(sql: SqlExecutor, guard: ConcurrencyGuard): SqlExecutor {
  return { query: (text, params) => guard.run(() => sql.query(text, params)) }
}

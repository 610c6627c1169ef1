import { type Kysely, Migrator, sql } from 'kysely'
import { migrationProvider } from './migrations/index.js'
import type { Database } from './types.js'

/**
 * Runs `fn` on one connection while holding a session-level PostgreSQL
 * advisory lock named `name` and scoped to the current schema, so instances
 * starting at once against one database take turns. `fn` must use the
 * connection it is given (PGlite has only one).
 */
export async function withAdvisoryLock<T>(
  db: Kysely<Database>,
  name: string,
  fn: (conn: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return db.connection().execute(async (conn) => {
    const key = sql`hashtext(${`video-api:${name}:`} || current_schema())`
    await sql`select pg_advisory_lock(${key})`.execute(conn)
    try {
      return await fn(conn)
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(conn)
    }
  })
}

/**
 * Brings the schema to the latest migration (Kysely Migrator), under the
 * `migrate` advisory lock. Idempotent: a second instance finds nothing to do.
 * @returns names of the migrations this call applied.
 * @throws the migration's error when one fails.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  return withAdvisoryLock(db, 'migrate', async (conn) => {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(conn)
    const schema = rows[0]?.schema ?? 'public'
    const migrator = new Migrator({ db: conn, provider: migrationProvider, migrationTableSchema: schema })
    const { error, results } = await migrator.migrateToLatest()
    if (error) throw error
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
  })
}

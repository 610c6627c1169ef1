import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ConcurrencyGuard } from 'floodgate'
import type { Kysely } from 'kysely'
import { readInstallationId } from '../auth/installation.js'
import { createDbGuard, type DbGuardSettings } from '../db/guard.js'
import { QueryCounter } from '../db/query_counter.js'
import type { Database } from '../db/types.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's database handle: every statement is counted (`db_queries_total`). */
    db: Kysely<Database>
    /** Counts the statements of `db` (bound to `/metrics` by the metrics plugin). */
    queries: QueryCounter
    /** The database guard: read-path PostgreSQL work runs through `dbGuard.run` (src/db/guard.ts). */
    dbGuard: ConcurrencyGuard
    /** This database's random id (`service_meta`), the `aud` of its tokens. */
    installationId: string
  }
}

export interface DatabasePluginOptions {
  /** An open, migrated database; the app does not close it. */
  db: Kysely<Database>
  /** @default maxConcurrent = DB_POOL_MAX's default, the rest floodgate's defaults */
  guard?: DbGuardSettings
}

/** The database capability: `db`, `queries`, `dbGuard`, `installationId`. */
async function databasePlugin(app: FastifyInstance, options: DatabasePluginOptions): Promise<void> {
  const queries = new QueryCounter()
  app.decorate('queries', queries)
  app.decorate('db', options.db.withPlugin(queries))
  app.decorate('dbGuard', createDbGuard(options.guard))
  // read before the app serves: not an app statement, so not in db_queries_total
  app.decorate('installationId', await readInstallationId(options.db))
}

export default fp(databasePlugin, { name: 'database', fastify: '5.x' })

import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import pg from 'pg'
import { fields } from '../config/fields.js'
import { lockDataDir } from './pglite_lock.js'
import type { Database } from './types.js'

export interface DatabaseHandle {
  db: Kysely<Database>
  /** `pg` for a PostgreSQL server, `pglite` for the embedded one. */
  kind: 'pg' | 'pglite'
  /** Closes the pool (or the embedded database). */
  close(): Promise<void>
}

export interface PgOptions {
  url: string
  /** Schema to create (if missing) and put first on `search_path`. */
  schema?: string | undefined
  /** Maximum connections in the pool. @default the field table's `DB_POOL_MAX` */
  poolMax?: number
  /**
   * Connections kept open however long they idle, once opened (capped at `poolMax`).
   * @default `poolMax`: no connection closes for idling
   */
  poolMin?: number
  /** How long a connection above `poolMin` may idle before it is closed (ms). @default 10000 (pg's) */
  poolIdleMs?: number
}

/**
 * A Kysely over a `pg` pool. With `schema`, every pooled connection gets `search_path=<schema>`.
 * Up to `poolMin` connections stay open however long they idle: pg's pool otherwise closes every
 * connection idle for 10 s, and the first burst after a lull then waits for a connection setup
 * per statement in flight (100–170 ms here on a quiet box, 300–550 ms under load). They open on
 * demand, not at start, so a CLI or a restarting instance holds only what it uses.
 */
export async function openPostgres(options: PgOptions): Promise<DatabaseHandle> {
  const base = { connectionString: options.url }
  if (options.schema !== undefined) await ensureSchema(options.url, options.schema)
  const max = options.poolMax ?? Number(fields.dbPoolMax.default)
  const min = Math.min(options.poolMin ?? max, max)
  const pool = new pg.Pool({
    ...base,
    max,
    min,
    ...(options.poolIdleMs === undefined ? {} : { idleTimeoutMillis: options.poolIdleMs }),
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
  })
  // An idle client losing its server must not crash the process; the next query reports the error.
  pool.on('error', () => {})
  // Same for a client checked out between two statements (a transaction of the interaction flush
  // while the server restarts): pg emits `error` on it, fatal without a listener.
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return { db, kind: 'pg', close: () => db.destroy() }
}

async function ensureSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`create schema if not exists "${schema}"`)
  } catch (error) {
    // Two instances creating the same schema at once: one gets a unique violation; the schema exists.
    if (!['23505', '42P06'].includes((error as { code?: string }).code ?? '')) throw error
  } finally {
    await client.end()
  }
}

/**
 * The embedded PostgreSQL (PGlite). `dir` undefined = in memory. A PGlite data
 * folder belongs to one process: start several instances only with a server.
 * The folder is locked with the file `<dir>.lock` (the process id) until `close()`.
 * @throws {DataDirLockedError} when another live process has the folder open.
 */
export async function openPglite(dir?: string): Promise<DatabaseHandle> {
  let client: PGlite
  let unlock = () => {}
  if (dir === undefined) client = new PGlite()
  else {
    mkdirSync(dir, { recursive: true })
    unlock = lockDataDir(`${dir}.lock`)
    try {
      client = new PGlite(dir)
    } catch (error) {
      unlock()
      throw error
    }
  }
  await client.waitReady.catch((error: unknown) => {
    unlock()
    throw error
  })
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) })
  return {
    db,
    kind: 'pglite',
    async close() {
      await db.destroy()
      if (!client.closed) await client.close()
      unlock()
    },
  }
}

/** `DATABASE_URL` set → PostgreSQL server; else PGlite in `<dataDir>/pglite`. */
export function openDatabase(config: {
  databaseUrl: string | undefined
  dbSchema: string | undefined
  dbPoolMax: number
  dbPoolMin?: number | undefined
  dataDir: string
}): Promise<DatabaseHandle> {
  if (config.databaseUrl !== undefined) {
    return openPostgres({
      url: config.databaseUrl,
      schema: config.dbSchema,
      poolMax: config.dbPoolMax,
      ...(config.dbPoolMin === undefined ? {} : { poolMin: config.dbPoolMin }),
    })
  }
  return openPglite(join(config.dataDir, 'pglite'))
}

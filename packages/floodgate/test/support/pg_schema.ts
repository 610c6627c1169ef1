import { randomBytes } from 'node:crypto'
import { dropSchema, TEST_DATABASE_URL } from '@floodgate/test-support'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { pgPoolDatabase, type SqlDatabase } from '../../src/sql/executor.js'

/**
 * A private PostgreSQL schema, a pool on it, `db` over the pool (with COPY, as a service on a
 * `pg` pool runs it), and `drop()` (ends the pool, `DROP SCHEMA … CASCADE`).
 */
export interface PgTestSchema {
  name: string
  pool: pg.Pool
  db: SqlDatabase
  drop(): Promise<void>
}

/** A pool whose sessions use `schema` (search_path), for workers that get the schema name. */
export function schemaPool(schema: string, max = 4): pg.Pool {
  return new pg.Pool({ connectionString: TEST_DATABASE_URL, max, options: `-c search_path=${schema}` })
}

/**
 * Creates the schema `fg_<label>_<8 hex>` (unique per call, so test files running
 * at the same time on the shared database never meet) and runs `setup` on a
 * client whose search_path is that schema, to create and fill the fixture tables.
 */
export async function createPgTestSchema(
  label: string,
  setup: (admin: pg.Client) => Promise<void>,
): Promise<PgTestSchema> {
  const name = `fg_${label}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await admin.connect()
  try {
    await admin.query(`CREATE SCHEMA ${name}`)
    await admin.query(`SET search_path = ${name}`)
    await setup(admin)
  } finally {
    await admin.end()
  }
  const pool = schemaPool(name)
  return {
    name,
    pool,
    db: pgPoolDatabase(pool, { copyFrom }),
    async drop() {
      await pool.end()
      await dropSchema(name, TEST_DATABASE_URL)
    },
  }
}

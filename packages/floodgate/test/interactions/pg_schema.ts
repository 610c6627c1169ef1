import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { interactionSchemaSql } from '../../src/interactions/index.js'
import { pgPoolDatabase, type SqlDatabase } from '../../src/sql/executor.js'

export const TEST_DATABASE_URL =
  process.env.FLOODGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A private PostgreSQL schema with the interaction tables and a minimal `videos` (ids 1…videos). */
export interface TestSchema {
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
 * Creates `fg_<label>_<random>` with `videos(id)` rows 1…`videos`, a `users(id)` table with ids
 * 1…`users` that likes reference (so a like by an unknown user is an integrity error), and the
 * DDL from {@link interactionSchemaSql}.
 */
export async function createTestSchema(label: string, videos: number, users = 10_000): Promise<TestSchema> {
  const name = `fg_${label}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await admin.connect()
  try {
    await admin.query(`CREATE SCHEMA ${name}`)
    await admin.query(`SET search_path = ${name}`)
    await admin.query('CREATE TABLE videos (id bigint PRIMARY KEY)')
    await admin.query('CREATE TABLE users (id bigint PRIMARY KEY)')
    await admin.query('INSERT INTO videos SELECT generate_series(1, $1::int)', [videos])
    await admin.query('INSERT INTO users SELECT generate_series(1, $1::int)', [users])
    await admin.query(`CREATE TABLE video_likes (
      video_id bigint NOT NULL REFERENCES videos (id) ON DELETE CASCADE,
      user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (video_id, user_id))`)
    for (const statement of interactionSchemaSql()) await admin.query(statement)
  } finally {
    await admin.end()
  }
  const pool = schemaPool(name)
  return {
    name,
    pool,
    db: pgPoolDatabase(pool),
    async drop() {
      await pool.end()
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
      await client.connect()
      await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)
      await client.end()
    },
  }
}

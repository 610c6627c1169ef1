import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { interactionSchemaSql } from '../../src/interactions/index.js'
import { pgPoolDatabase, type SqlDatabase } from '../../src/sql/executor.js'

export const TEST_DATABASE_URL =
  process.env.FLOODGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A private schema (`fg_<label>_<hex>`) with `videos(id)` 1…n and the interaction tables. */
export interface CountersSchema {
  name: string
  pool: pg.Pool
  db: SqlDatabase
  drop(): Promise<void>
}

/** A pool whose sessions use `schema`. */
export function schemaPool(schema: string, max = 4): pg.Pool {
  return new pg.Pool({ connectionString: TEST_DATABASE_URL, max, options: `-c search_path=${schema}` })
}

export async function createCountersSchema(label: string, videos: number): Promise<CountersSchema> {
  const name = `fg_${label}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await admin.connect()
  try {
    await admin.query(`CREATE SCHEMA ${name}`)
    await admin.query(`SET search_path = ${name}`)
    await admin.query('CREATE TABLE videos (id bigint PRIMARY KEY)')
    await admin.query('INSERT INTO videos SELECT generate_series(1, $1::int)', [videos])
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

/** Inserts like (or favourite) rows and bumps the count column, as the flush would. */
export async function seedMembers(
  db: SqlDatabase,
  kind: 'likes' | 'favorites',
  videoId: number,
  users: readonly number[],
): Promise<void> {
  const table = kind === 'likes' ? 'video_likes' : 'video_favorites'
  const column = kind === 'likes' ? 'like_count' : 'favorite_count'
  await db.query(`INSERT INTO ${table} (video_id, user_id) SELECT $1, unnest($2::bigint[])`, [videoId, users])
  await db.query(`UPDATE videos SET ${column} = ${column} + $2 WHERE id = $1`, [videoId, users.length])
}

/** Inserts `n` play rows and bumps play_count. */
export async function seedPlays(db: SqlDatabase, videoId: number, n: number): Promise<void> {
  await db.query(
    `INSERT INTO video_plays (event_id, video_id, viewer) SELECT $1::text || ':' || g || '-0', $1::bigint, 'u' || g FROM generate_series(1, $2::int) g`,
    [String(videoId), n],
  )
  await db.query('UPDATE videos SET play_count = play_count + $2 WHERE id = $1', [videoId, n])
}

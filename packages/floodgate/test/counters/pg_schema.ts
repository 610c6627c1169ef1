import { interactionSchemaSql } from '../../src/interactions/index.js'
import type { SqlDatabase } from '../../src/sql/executor.js'
import { createPgTestSchema, type PgTestSchema } from '../support/pg_schema.js'

export { schemaPool } from '../support/pg_schema.js'

/** A private schema (`fg_<label>_<hex>`) with `videos(id)` 1…n and the interaction tables. */
export type CountersSchema = PgTestSchema

export function createCountersSchema(label: string, videos: number): Promise<CountersSchema> {
  return createPgTestSchema(label, async (admin) => {
    await admin.query('CREATE TABLE videos (id bigint PRIMARY KEY)')
    await admin.query('INSERT INTO videos SELECT generate_series(1, $1::int)', [videos])
    for (const statement of interactionSchemaSql()) await admin.query(statement)
  })
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

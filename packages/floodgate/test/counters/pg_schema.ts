import { interactionSchemaSql } from '../../src/interactions/index.js'
import type { SqlDatabase } from '../../src/sql/executor.js'
import { createPgTestSchema, type PgTestSchema } from '../support/pg_schema.js'

export { schemaPool } from '../support/pg_schema.js'

/** A private schema (`fg_<label>_<hex>`) with `items(id)` 1…n and the interaction tables. */
export type CountersSchema = PgTestSchema

export function createCountersSchema(label: string, items: number): Promise<CountersSchema> {
  return createPgTestSchema(label, async (admin) => {
    await admin.query('CREATE TABLE items (id bigint PRIMARY KEY)')
    await admin.query('INSERT INTO items SELECT generate_series(1, $1::int)', [items])
    for (const statement of interactionSchemaSql()) await admin.query(statement)
  })
}

/** Inserts like (or favourite) rows and bumps the count column, as the flush would. */
export async function seedMembers(
  db: SqlDatabase,
  kind: 'likes' | 'favorites',
  itemId: number,
  users: readonly number[],
): Promise<void> {
  const table = kind === 'likes' ? 'item_likes' : 'item_favorites'
  const column = kind === 'likes' ? 'like_count' : 'favorite_count'
  await db.query(`INSERT INTO ${table} (item_id, user_id) SELECT $1, unnest($2::bigint[])`, [itemId, users])
  await db.query(`UPDATE items SET ${column} = ${column} + $2 WHERE id = $1`, [itemId, users.length])
}

/** Inserts `n` play rows and bumps play_count. */
export async function seedPlays(db: SqlDatabase, itemId: number, n: number): Promise<void> {
  await db.query(
    `INSERT INTO item_plays (event_id, item_id, viewer) SELECT $1::text || ':' || g || '-0', $1::bigint, 'u' || g FROM generate_series(1, $2::int) g`,
    [String(itemId), n],
  )
  await db.query('UPDATE items SET play_count = play_count + $2 WHERE id = $1', [itemId, n])
}

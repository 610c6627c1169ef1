import { interactionSchemaSql } from '../../src/interactions/index.js'
import { createPgTestSchema, type PgTestSchema } from '../support/pg_schema.js'

export { schemaPool } from '../support/pg_schema.js'

/** A private PostgreSQL schema with the interaction tables and a minimal `items` (ids 1…items). */
export type TestSchema = PgTestSchema

/**
 * Creates `fg_<label>_<random>` with `items(id)` rows 1…`items`, a `users(id)` table with ids
 * 1…`users` that likes reference (so a like by an unknown user is an integrity error), and the
 * DDL from {@link interactionSchemaSql}.
 */
export function createTestSchema(label: string, items: number, users = 10_000): Promise<TestSchema> {
  return createPgTestSchema(label, async (admin) => {
    await admin.query('CREATE TABLE items (id bigint PRIMARY KEY)')
    await admin.query('CREATE TABLE users (id bigint PRIMARY KEY)')
    await admin.query('INSERT INTO items SELECT generate_series(1, $1::int)', [items])
    await admin.query('INSERT INTO users SELECT generate_series(1, $1::int)', [users])
    await admin.query(`CREATE TABLE item_likes (
      item_id bigint NOT NULL REFERENCES items (id) ON DELETE CASCADE,
      user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (item_id, user_id))`)
    for (const statement of interactionSchemaSql()) await admin.query(statement)
  })
}

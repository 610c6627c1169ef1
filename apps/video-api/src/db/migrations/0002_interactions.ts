import { interactionSchemaSql } from 'floodgate'
import { type Kysely, sql } from 'kysely'
import { videoInteractionTables } from '../../interactions/tables.js'

/**
 * The interaction flush's tables (floodgate's `interactionSchemaSql`): adds
 * `interaction_watermarks` (last applied event per (kind, video, user), for the
 * order-safe apply); the detail tables, their indexes and the count columns
 * exist since 0001, so those statements are no-ops (`IF NOT EXISTS`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of interactionSchemaSql(videoInteractionTables)) await sql.raw(statement).execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists ${sql.table(videoInteractionTables.watermarks)}`.execute(db)
}

import type { Kysely } from 'kysely'
import type { Database } from '../db/types.js'

/**
 * This database's installation id (`service_meta`, created once by migration
 * 0003). Every instance on the same database reads the same id.
 * @throws {Error} when the table has no row (the database is not migrated).
 */
export async function readInstallationId(db: Kysely<Database>): Promise<string> {
  const row = await db.selectFrom('service_meta').select('installation_id').executeTakeFirst()
  if (row === undefined) throw new Error('service_meta has no row: run the migrations first')
  return row.installation_id
}

import type { Kysely } from 'kysely'
import { type SeedReport, seedCatalog } from '../seed/insert.js'
import { migrateToLatest, withAdvisoryLock } from './migrate.js'
import type { Database } from './types.js'

/** Default newest creation time of seeded catalogs (fixed, so catalogs are reproducible). */
export const SEED_ANCHOR_MS = Date.UTC(2026, 10, 1)

/**
 * Start-up database work: migrations, then — when `seedOnEmpty` and there is
 * no user yet — the demo catalog. Each step runs under its own advisory lock,
 * and the emptiness check happens inside the lock, so of several instances
 * starting at once exactly one seeds.
 */
export async function prepareDatabase(
  db: Kysely<Database>,
  options: { seedOnEmpty: boolean; seedUsers: number; seedVideos: number },
): Promise<{ migrations: string[]; seeded: SeedReport | undefined }> {
  const migrations = await migrateToLatest(db)
  if (!options.seedOnEmpty) return { migrations, seeded: undefined }
  const seeded = await withAdvisoryLock(db, 'seed', async (conn) => {
    const anyUser = await conn.selectFrom('users').select('id').limit(1).executeTakeFirst()
    if (anyUser) return undefined
    return seedCatalog(conn, {
      users: options.seedUsers,
      videos: options.seedVideos,
      seed: 42,
      anchorMs: SEED_ANCHOR_MS,
    })
  })
  return { migrations, seeded }
}

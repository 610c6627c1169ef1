import { randomBytes } from 'node:crypto'
import { dropSchema as dropSharedSchema, TEST_DATABASE_URL } from '@floodgate/test-support'
import { type Kysely, sql } from 'kysely'
import { openPglite, openPostgres } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Database } from '../../src/db/types.js'

/** `pglite` when FLOODGATE_TEST_DB=pglite, else the PostgreSQL server. */
export const testDbKind: 'pg' | 'pglite' = process.env.FLOODGATE_TEST_DB === 'pglite' ? 'pglite' : 'pg'

export interface TestDatabase {
  db: Kysely<Database>
  /** The schema (server only). */
  schema: string | undefined
  close(): Promise<void>
}

export function uniqueSchema(label: string): string {
  return `va_t_${label}_${process.pid}_${randomBytes(3).toString('hex')}`
}

/** A fresh, migrated database: a new schema on the server (dropped on close), or an in-memory PGlite. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  if (testDbKind === 'pglite') {
    const handle = await openPglite()
    await migrateToLatest(handle.db)
    return { db: handle.db, schema: undefined, close: handle.close }
  }
  const schema = uniqueSchema(label)
  const handle = await openPostgres({ url: TEST_DATABASE_URL, schema, poolMax: 5 })
  await migrateToLatest(handle.db)
  return {
    db: handle.db,
    schema,
    async close() {
      await handle.close()
      await dropSchema(schema)
    },
  }
}

export function dropSchema(schema: string): Promise<void> {
  return dropSharedSchema(schema, TEST_DATABASE_URL)
}

const tables = [
  'users',
  'videos',
  'video_likes',
  'video_favorites',
  'video_plays',
  'video_popularity',
] as const

/** Row count of every table plus a digest of `videos` contents, to prove "no write at all" (one query). */
export async function snapshot(db: Kysely<Database>): Promise<Record<string, string>> {
  const counts = tables.map(
    (table) => sql`(select count(*)::text from ${sql.table(table)}) as ${sql.ref(table)}`,
  )
  const { rows } = await sql<Record<string, string>>`
    select ${sql.join(counts)},
      coalesce((select md5(string_agg(v::text, ',' order by id)) from videos v), '') as "videosDigest"`.execute(
    db,
  )
  return { ...rows[0] }
}

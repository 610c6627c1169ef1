import { TEST_DATABASE_URL } from '@floodgate/test-support'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { dropSchema, uniqueSchema } from './support/database.js'
import { runWorker } from './support/workers.js'

// About the PostgreSQL server (several processes, one schema): runs in both suite modes.
const schema = uniqueSchema('migrate')
afterAll(() => dropSchema(schema))

describe('migrations under concurrency', () => {
  it('three processes migrating one schema at once all succeed, and exactly one applies each migration', async () => {
    const startAt = Date.now() + 2500
    const reports = await Promise.all(
      [0, 1, 2].map(() =>
        runWorker(new URL('./workers/migrate_worker.ts', import.meta.url), [
          TEST_DATABASE_URL,
          schema,
          String(startAt),
        ]),
      ),
    )
    const results = reports.map(
      (r) =>
        (r[0] ?? { ok: false, error: 'no report' }) as { ok: boolean; applied?: string[]; error?: string },
    )
    expect(results.map((r) => r.error ?? 'ok')).toEqual(['ok', 'ok', 'ok'])
    expect(results.flatMap((r) => r.applied ?? [])).toEqual([
      '0001_initial',
      '0002_interactions',
      '0003_service_meta',
    ])

    const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await client.connect()
    try {
      const tables = await client.query<{ table_name: string }>(
        'select table_name from information_schema.tables where table_schema = $1 order by 1',
        [schema],
      )
      expect(tables.rows.map((r) => r.table_name)).toEqual([
        'interaction_watermarks',
        'kysely_migration',
        'kysely_migration_lock',
        'service_meta',
        'users',
        'video_favorites',
        'video_likes',
        'video_plays',
        'video_popularity',
        'videos',
      ])
      const applied = await client.query(`select name from "${schema}".kysely_migration`)
      expect(applied.rowCount).toBe(3)
      // one installation id, created once whatever the number of migrating processes
      const meta = await client.query(`select installation_id from "${schema}".service_meta`)
      expect(meta.rowCount).toBe(1)
    } finally {
      await client.end()
    }
  })
})

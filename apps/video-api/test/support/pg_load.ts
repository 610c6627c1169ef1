import { setTimeout as sleep } from 'node:timers/promises'
import { TEST_DATABASE_URL } from '@floodgate/test-support'
import pg from 'pg'

/**
 * A backend reports its table counters at most once a second while busy and, once idle, within
 * PGSTAT_IDLE_INTERVAL (10 s, PostgreSQL 15 pgstat.c): wait this long after the last statement
 * before reading them (ms).
 */
export const PG_STATS_SETTLE_MS = 11_000

/**
 * Table scans (seq_scan + idx_scan of `pg_stat_user_tables`) of every table in `schema`, summed:
 * the statements that read the app's tables, counted by the database (a statement joining two
 * tables counts twice). Read after {@link PG_STATS_SETTLE_MS} of quiet so the app's idle backends
 * have reported.
 */
export async function settledTableScans(schema: string): Promise<number> {
  await sleep(PG_STATS_SETTLE_MS)
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    const { rows } = await client.query<{ scans: string | null }>(
      `SELECT sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text AS scans
         FROM pg_stat_user_tables WHERE schemaname = $1`,
      [schema],
    )
    return Number(rows[0]?.scans ?? 0)
  } finally {
    await client.end()
  }
}

/**
 * Samples, every `intervalMs`, how many backends with `application_name = appName` are running a
 * statement (`pg_stat_activity.state = 'active'`); the sampler's own backend is another
 * application. `stop()` returns the maximum and the number of samples.
 */
export async function sampleActiveBackends(
  appName: string,
  intervalMs: number,
): Promise<{ stop(): Promise<{ max: number; samples: number }> }> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  let running = true
  let max = 0
  let samples = 0
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`,
        [appName],
      )
      max = Math.max(max, rows[0]?.n ?? 0)
      samples++
      await sleep(intervalMs)
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      await client.end()
      return { max, samples }
    },
  }
}

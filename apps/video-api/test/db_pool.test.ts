// The pg pool keeps its connections through a lull (src/db/connect.ts): once opened, still the
// same backends after idling past the pool's idle timeout, so a burst after a quiet spell waits
// for no connection setup. Server only.
import { setTimeout as sleep } from 'node:timers/promises'
import { TEST_DATABASE_URL } from '@floodgate/test-support'
import { type Kysely, sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openPostgres } from '../src/db/connect.js'
import type { Database } from '../src/db/types.js'
import { testDbKind } from './support/database.js'

const POOL = 4
// short, so the test idles past it; the default is pg's 10 s
const IDLE_MS = 150
let handle: DatabaseHandle | undefined

afterEach(async () => {
  await handle?.close()
  handle = undefined
})

/** The backend pids of `POOL` statements held open at once (so each takes its own connection). */
async function burstPids(db: Kysely<Database>): Promise<number[]> {
  const rows = await Promise.all(
    Array.from({ length: POOL }, () =>
      sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.05)`.execute(db),
    ),
  )
  return rows.map((r) => r.rows[0]!.pid).sort((a, b) => a - b)
}

/** Backends of this test's pool, by the application name its URL sets. */
async function backends(db: Kysely<Database>, name: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity where application_name = ${name}`.execute(db)
  return rows[0]!.n
}

function urlNamed(name: string): string {
  const url = new URL(TEST_DATABASE_URL)
  url.searchParams.set('application_name', name)
  return url.toString()
}

describe.skipIf(testDbKind === 'pglite')('the pg pool through a lull', () => {
  it('keeps every connection it opened past the idle timeout (DB_POOL_MIN defaults to DB_POOL_MAX)', async () => {
    const name = `va_pool_${process.pid}`
    handle = await openPostgres({ url: urlNamed(name), poolMax: POOL, poolIdleMs: IDLE_MS })
    const before = await burstPids(handle.db)
    expect(new Set(before).size).toBe(POOL)
    await sleep(IDLE_MS * 4)
    // the count's own statement runs on one of them
    expect(await backends(handle.db, name)).toBe(POOL)
    expect(await burstPids(handle.db)).toEqual(before)
  })

  it('closes the connections above poolMin after the idle timeout', async () => {
    const name = `va_pool_min_${process.pid}`
    handle = await openPostgres({ url: urlNamed(name), poolMax: POOL, poolMin: 1, poolIdleMs: IDLE_MS })
    await burstPids(handle.db)
    expect(await backends(handle.db, name)).toBe(POOL)
    await sleep(IDLE_MS * 4)
    expect(await backends(handle.db, name)).toBe(1)
  })
})

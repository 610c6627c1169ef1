// Issue "No 2-second reads under a penetration flood": the bench's slowest reads came in the first
// second of a phase, after the instances had idled, in every mode — pg's pool had closed every
// connection idle for 10 s, so the first requests each waited for a new PostgreSQL connection
// (300–550 ms on the loaded box). Real main.ts processes with the default configuration (see
// support/burst_service.ts): a burst of cold reads, a lull past that idle timeout, then another:
// no PostgreSQL connection may open during the second. Server only.
import { setTimeout as sleep } from 'node:timers/promises'
import { TEST_DATABASE_URL } from '@floodgate/test-support'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fields } from '../../src/config/fields.js'
import { runBurst } from '../support/burst.js'
import { type BurstService, startBurstService } from '../support/burst_service.js'
import { testDbKind } from '../support/database.js'
import { plainTestRedisClient } from '../support/redis.js'

const INSTANCES = 2
/** Distinct cold videos per burst, so every read is a cache miss and a statement. */
const VIDEOS = 600
/**
 * Twice the pools' size in flight: every connection busy, within the database guard's queue (so
 * no read is shed with 503: load shedding is not what is tested here).
 */
const IN_FLIGHT = 2 * INSTANCES * Number(fields.dbPoolMax.default)
/** pg's pool closes a connection idle this long (its default `idleTimeoutMillis`, ms), plus a margin. */
const LULL_MS = 10_000 + 1_500
const ANSWER_WITHIN_MS = Number(fields.requestTimeoutMs.default)

const redis = plainTestRedisClient()
const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
let burst: BurstService | undefined

beforeAll(async () => {
  if (testDbKind === 'pglite') return
  await admin.connect()
  burst = await startBurstService('lull', INSTANCES, redis)
}, 180_000)

afterAll(async () => {
  await burst?.close()
  await admin.end().catch(() => {})
  redis.disconnect()
})

/** The instances' PostgreSQL backends: how many, and how many started at or after `since`. */
async function backends(appName: string, since: Date): Promise<{ total: number; since: number }> {
  const { rows } = await admin.query<{ total: number; since: number }>(
    `SELECT count(*)::int AS total, (count(*) FILTER (WHERE backend_start >= $2))::int AS since
       FROM pg_stat_activity WHERE application_name = $1`,
    [appName, since],
  )
  return rows[0]!
}

describe.skipIf(testDbKind === 'pglite')('a burst after a lull', () => {
  it(`${VIDEOS} cold reads after ${LULL_MS / 1000} s idle open no PostgreSQL connection`, async () => {
    const b = burst!
    const ids = await b.publicIds(20_000)
    const spec = (slice: string[]) => ({
      bases: b.bases,
      paths: slice.map((id) => `/videos/${id}`),
      total: VIDEOS,
      concurrency: IN_FLIGHT,
      spreadSources: true,
      timeoutMs: ANSWER_WITHIN_MS,
    })
    // the pools open what a burst needs
    const first = await runBurst(spec(ids.slice(-2 * VIDEOS, -VIDEOS)))
    expect.soft(first.statuses).toEqual({ '200': VIDEOS })
    const opened = await backends(b.appName, new Date())
    await sleep(LULL_MS)
    const { rows } = await admin.query<{ now: Date }>('SELECT clock_timestamp() AS now')
    const start = rows[0]!.now
    const held = await backends(b.appName, start)
    const result = await runBurst(spec(ids.slice(-VIDEOS)))
    const after = await backends(b.appName, start)
    console.log(JSON.stringify({ test: 'after a lull', opened, held, after, ...result, timeline: undefined }))
    expect
      .soft(result.statuses, JSON.stringify({ ...result, timeline: undefined }))
      .toEqual({ '200': VIDEOS })
    // The first burst need not fill every pool (on a slow Redis fewer than DB_POOL_MAX statements
    // may be in flight at once); what it opened must all outlive the lull, and the second burst
    // may open only what the pools had not reached yet.
    const cap = INSTANCES * Number(fields.dbPoolMax.default)
    expect.soft(opened.total, 'backends the first burst opened').toBeGreaterThanOrEqual(INSTANCES)
    expect.soft(held.total, 'backends held through the lull').toBeGreaterThanOrEqual(opened.total)
    expect
      .soft(after.since, 'PostgreSQL connections opened during the burst')
      .toBeLessThanOrEqual(Math.max(0, cap - held.total))
  }, 120_000)
})

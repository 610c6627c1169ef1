// Issue "Flood-proof with the defaults", first row: thousands of concurrent GETs of one cold video
// over several instances must cost PostgreSQL a handful of statements, not one per request.
// Real main.ts processes with the default configuration (see support/burst_service.ts for the
// few overrides and why), 20,000 seeded videos, a separate client process, one core kept busy.
// Server only (several processes share one database; PGlite is one process's).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fields } from '../../src/config/fields.js'
import { runBurst } from '../support/burst.js'
import { type BurstService, startBurstService } from '../support/burst_service.js'
import { testDbKind } from '../support/database.js'
import { settledTableScans } from '../support/pg_load.js'
import { plainTestRedisClient } from '../support/redis.js'

const INSTANCES = 3
const REQUESTS = 3000
const IN_FLIGHT = 1000
/**
 * What one cold key may cost each instance, whatever the request count: one load of the row
 * (its own, if another instance's load lock outlasted the wait) and one read of the counts from
 * PostgreSQL (if Redis could not answer them). Each is one single-table statement (one scan).
 */
const STATEMENTS_PER_INSTANCE = 2
/** A request not answered within REQUEST_TIMEOUT_MS (default) counts as a client error (ms). */
const ANSWER_WITHIN_MS = Number(fields.requestTimeoutMs.default)

const redis = plainTestRedisClient()
let burst: BurstService | undefined

beforeAll(async () => {
  if (testDbKind === 'pglite') return
  burst = await startBurstService('coldburst', INSTANCES, redis)
}, 180_000)

afterAll(async () => {
  await burst?.close()
  redis.disconnect()
})

describe.skipIf(testDbKind === 'pglite')('a burst of GETs of one cold video', () => {
  it(`${REQUESTS} GETs, ${IN_FLIGHT} in flight, over ${INSTANCES} instances: a bounded number of PostgreSQL statements`, async () => {
    const b = burst!
    const ids = await b.publicIds(20_000)
    const video = ids[Math.floor(ids.length / 2)]! // never read before: cold in L1 and L2
    const before = await settledTableScans(b.schema)
    const result = await runBurst({
      bases: b.bases,
      paths: [`/videos/${video}`],
      total: REQUESTS,
      concurrency: IN_FLIGHT,
      // many clients, as in a real flood: the anonymous per-IP quota (300 / 60 s) is not what is tested
      spreadSources: true,
      timeoutMs: ANSWER_WITHIN_MS,
    })
    const statements = (await settledTableScans(b.schema)) - before
    console.log(JSON.stringify({ test: 'cold video burst', statements, ...result, timeline: undefined }))
    // soft: a failure reports every figure
    expect
      .soft(result.statuses, JSON.stringify({ ...result, timeline: undefined }))
      .toEqual({ '200': REQUESTS })
    expect
      .soft(statements, 'table scans of the schema')
      .toBeLessThanOrEqual(INSTANCES * STATEMENTS_PER_INSTANCE)
  }, 150_000)
})

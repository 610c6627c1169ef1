// Issue "Flood-proof with the defaults", second row: thousands of concurrent GETs of ids that do
// not exist must be answered by the Bloom gate: at most 1 % reach PostgreSQL, and no negative
// cache entry is written for an id the filter rules out. Real main.ts processes with the default
// configuration (see support/burst_service.ts for the few overrides and why), 20,000 seeded
// videos, a separate client process, one core kept busy. Server only (several processes share
// one database; PGlite is one process's).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fields } from '../../src/config/fields.js'
import { runBurst } from '../support/burst.js'
import { type BurstService, startBurstService } from '../support/burst_service.js'
import { testDbKind } from '../support/database.js'
import { scrapeMetrics } from '../support/metrics_text.js'
import { negativeKeys } from '../support/negative_keys.js'
import { settledTableScans } from '../support/pg_load.js'
import { plainTestRedisClient } from '../support/redis.js'

const INSTANCES = 3
const REQUESTS = 5000
const IN_FLIGHT = 1000
/** The target: ≈ 0 statements; at most this share of the requests may reach PostgreSQL. */
const MAX_DB_SHARE = 0.01
/** A request not answered within REQUEST_TIMEOUT_MS (default) counts as a client error (ms). */
const ANSWER_WITHIN_MS = Number(fields.requestTimeoutMs.default)

const redis = plainTestRedisClient()
let burst: BurstService | undefined

beforeAll(async () => {
  if (testDbKind === 'pglite') return
  burst = await startBurstService('absentburst', INSTANCES, redis)
}, 180_000)

afterAll(async () => {
  await burst?.close()
  redis.disconnect()
})

/** One instance's Bloom replica answers by kind (`floodgate_bloom_replica_items_total`), to tell why an id went on. */
async function replicaAnswers(base: string): Promise<Record<string, number>> {
  const answers: Record<string, number> = {}
  for (const [series, value] of await scrapeMetrics(base)) {
    const answer = /^floodgate_bloom_replica_items_total\{.*answer="(\w+)"/.exec(series)?.[1]
    if (answer !== undefined) answers[answer] = value
  }
  return answers
}

describe.skipIf(testDbKind === 'pglite')('a burst of GETs of absent ids', () => {
  it(`${REQUESTS} GETs of distinct absent ids, ${IN_FLIGHT} in flight, over ${INSTANCES} instances: ≤ 1 % reach PostgreSQL, no negative keys`, async () => {
    const b = burst!
    const from = await b.absentFrom()
    const ids = Array.from({ length: REQUESTS }, (_, i) => String(from + i))
    // The filter itself (as built by the instances) says which ids it rules out: with 20,000 ids in
    // 10^7 bits and 7 hashes the false-positive rate is (1 - e^(-7·2·10^4/10^7))^7 ≈ 10^-13.
    const maybe = await b.bloom.mightContain(ids)
    const ruledOut = new Set(ids.filter((_, i) => !maybe[i]))
    expect(ruledOut.size).toBe(REQUESTS)

    const before = await settledTableScans(b.schema)
    const result = await runBurst({
      bases: b.bases,
      paths: ids.map((id) => `/videos/${id}`),
      total: REQUESTS,
      concurrency: IN_FLIGHT,
      // many clients, as in a real flood: the anonymous per-IP quota (300 / 60 s) is not what is tested
      spreadSources: true,
      timeoutMs: ANSWER_WITHIN_MS,
    })
    const statements = (await settledTableScans(b.schema)) - before
    const negatives = (await negativeKeys(redis, `${b.prefix}:`)).filter((key) =>
      ruledOut.has(/\{([^}]*)\}/.exec(key)?.[1] ?? ''),
    )
    console.log(
      JSON.stringify({
        test: 'absent ids burst',
        statements,
        negativeKeys: negatives.length,
        bloomAnswers: await Promise.all(b.bases.map(replicaAnswers)),
        ...result,
        timeline: undefined,
      }),
    )
    // soft: a failure reports every figure
    expect
      .soft(result.statuses, JSON.stringify({ ...result, timeline: undefined }))
      .toEqual({ '404': REQUESTS })
    expect.soft(statements, 'table scans of the schema').toBeLessThanOrEqual(REQUESTS * MAX_DB_SHARE)
    expect.soft(negatives.length, 'negative keys of ruled-out ids').toBe(0)
  }, 150_000)
})

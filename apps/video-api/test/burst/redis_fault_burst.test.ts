// Issue "Flood-proof with the defaults": Redis killed, or stopped (SIGSTOP), in the middle of a
// read burst. PostgreSQL concurrency must stay within the guard's bound (instances × DB_POOL_MAX),
// reads keep answering (counts flagged stale), the only 5xx is the guard's 503 as problem+json
// with Retry-After, every request gets an answer in time (and some answer every 500 ms), and no
// process dies. Real main.ts
// processes with the default configuration (see support/burst_service.ts for the overrides and
// why; here REDIS_URL points at a private redis-server), a separate client process, one core
// kept busy. Server only (several processes share one database; PGlite is one process's). Not on
// the cluster pass: it kills its own single-node Redis; a cluster node's loss is a failover,
// tested by test/cluster/failover.test.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import { PrivateRedis } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fields } from '../../src/config/fields.js'
import { type BurstReport, runBurst } from '../support/burst.js'
import { type BurstService, startBurstService } from '../support/burst_service.js'
import { testDbKind } from '../support/database.js'
import { sampleActiveBackends } from '../support/pg_load.js'
import { TEST_REDIS_CLUSTER_NODES } from '../support/redis.js'
import { isAlive } from '../support/service_processes.js'

const INSTANCES = 3
const IN_FLIGHT = 300
const BURST_MS = 6000
/** The fault begins this long after the first requests (ms). */
const FAULT_AT_MS = 1500
/** How long the SIGSTOPped Redis stays stopped (ms). */
const STOPPED_MS = 2000
/** Every 20 ms, the instances' active PostgreSQL backends are counted. */
const SAMPLE_EVERY_MS = 20
/** The guard's bound: each instance runs at most DB_POOL_MAX statements at once (default). */
const DB_BOUND = INSTANCES * Number(fields.dbPoolMax.default)
/** A request not answered within REQUEST_TIMEOUT_MS (default) counts as a client error (ms). */
const ANSWER_WITHIN_MS = Number(fields.requestTimeoutMs.default)

const skip = testDbKind === 'pglite' || TEST_REDIS_CLUSTER_NODES !== undefined
let server: PrivateRedis | undefined
let redis: Redis | undefined
let burst: BurstService | undefined

beforeAll(async () => {
  if (skip) return
  server = await PrivateRedis.start()
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 })
  redis.on('error', () => {}) // the test kills the server: connection errors are expected
  burst = await startBurstService('faultburst', INSTANCES, redis, { REDIS_URL: server.url })
}, 180_000)

afterAll(async () => {
  // the private server goes with its keys: close the instances, then the server
  await burst?.close().catch(() => {})
  redis?.disconnect()
  await server?.destroy()
})

/** 90 % reads of live videos, 10 % of absent ids, interleaved. */
async function paths(b: BurstService): Promise<{ paths: string[] }> {
  const ids = await b.publicIds(450)
  const absent = await b.absentFrom()
  const out: string[] = []
  ids.forEach((id, i) => {
    out.push(`/videos/${id}`)
    if (i % 9 === 8) out.push(`/videos/${absent + i}`)
  })
  return { paths: out }
}

/**
 * Reads every path once (caches and JIT warm, as in a service that was running before the
 * fault), then fires the burst with `fault` at FAULT_AT_MS; samples PostgreSQL meanwhile.
 */
async function burstWithFault(
  b: BurstService,
  fault: () => Promise<void>,
): Promise<{ result: BurstReport; maxActive: number; samples: number }> {
  const common = {
    bases: b.bases,
    ...(await paths(b)),
    // many clients, as in a real flood: the anonymous per-IP quota (300 / 60 s) is not what is tested
    spreadSources: true,
    timeoutMs: ANSWER_WITHIN_MS,
  }
  await runBurst({ ...common, total: common.paths.length, concurrency: 20 })
  const sampler = await sampleActiveBackends(b.appName, SAMPLE_EVERY_MS)
  let faulted: Promise<void> = Promise.resolve()
  let result: BurstReport
  try {
    result = await runBurst({ ...common, durationMs: BURST_MS, concurrency: IN_FLIGHT }, () => {
      faulted = sleep(FAULT_AT_MS).then(fault)
    })
  } finally {
    await faulted
  }
  const { max, samples } = await sampler.stop()
  return { result, maxActive: max, samples }
}

function expectDegradedButAnswering(b: BurstService, run: Awaited<ReturnType<typeof burstWithFault>>) {
  const { result, maxActive } = run
  console.log(JSON.stringify({ maxActive, samples: run.samples, ...result }))
  const summary = JSON.stringify({ ...result, timeline: undefined })
  // soft: a failure reports every figure
  expect
    .soft(
      Object.keys(result.statuses).filter((s) => !['200', '404', '503'].includes(s)),
      summary,
    )
    .toEqual([])
  expect.soft(result.bad503, '503 without problem+json or Retry-After').toBe(0)
  expect.soft(result.errors, 'requests without an answer').toEqual({})
  expect.soft(maxActive, 'active PostgreSQL backends of the instances').toBeLessThanOrEqual(DB_BOUND)
  expect.soft(result.countsStale, 'responses with stale counts').toBeGreaterThan(0)
  // reads keep answering: an answer (not a client error) in every 500 ms, from the first answer
  // (the burst's own ramp-up is not the fault's) to the end of the run
  const answered = (bucket: Record<string, number>) => Object.keys(bucket).some((k) => k !== 'error')
  const first = result.timeline.findIndex(answered)
  const silent = result.timeline.flatMap((bucket, i) => (i < first || answered(bucket) ? [] : [i * 500]))
  expect.soft(silent, 'ms into the burst of 500 ms without an answer').toEqual([])
  expect(b.services.filter((s) => !isAlive(s)).map((s) => s.output())).toEqual([])
}

describe.skipIf(skip)('a read burst while Redis fails', () => {
  it(`Redis SIGSTOPped for ${STOPPED_MS} ms mid-burst: bounded PostgreSQL load, every read answered`, async () => {
    const b = burst!
    const pid = Number(/process_id:(\d+)/.exec(await redis!.info('server'))?.[1])
    expect(pid).toBeGreaterThan(0)
    let stopped = false
    try {
      const run = await burstWithFault(b, async () => {
        process.kill(pid, 'SIGSTOP')
        stopped = true
        await sleep(STOPPED_MS)
        process.kill(pid, 'SIGCONT')
        stopped = false
      })
      expectDegradedButAnswering(b, run)
    } finally {
      if (stopped) process.kill(pid, 'SIGCONT')
    }
  }, 90_000)

  it('Redis SIGKILLed mid-burst: bounded PostgreSQL load, every read answered', async () => {
    const b = burst!
    const run = await burstWithFault(b, () => server!.kill())
    expectDegradedButAnswering(b, run)
  }, 90_000)
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, until } from '@floodgate/test-support'
import type { FastifyInstance } from 'fastify'
import { createRedisClient, type RedisClient } from 'floodgate'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalRedis, startLocalRedis } from '../src/redis/local_server.js'
import { createTestApp, createVideo, registerUser, type TestApp } from './support/app.js'
import { dbQueries } from './support/metrics_text.js'

// A burst of GETs of ids that do not exist, on a private Redis (INFO commandstats counts this
// app's commands only) with the service's default cache settings (10M-bit filter, 50 ms idle /
// 2 s wall deadlines). The ids are rejected from process memory: no database query, no negative
// key, and a handful of Redis commands for the whole burst.
const BURST = 5_000
const dir = mkdtempSync(join(tmpdir(), 'va-bloom-burst-'))
let server: LocalRedis
let redis: RedisClient
let t: TestApp
let app: FastifyInstance
/** The app's key prefix (`t.prefix`). */
let prefix: string

/** Teardown steps, run last-registered first. */
const teardown: (() => unknown)[] = []

beforeAll(async () => {
  const port = await freePort()
  server = await startLocalRedis(dir, port)
  teardown.push(
    () => rmSync(dir, { recursive: true, force: true }),
    () => server.stop(),
  )
  redis = createRedisClient(server.url)
  teardown.push(() => redis.disconnect())
  t = await createTestApp('bloom_burst', { redis, cache: {} })
  teardown.push(() => t.close())
  ;({ app, prefix } = t)
}, 60_000)

afterAll(async () => {
  for (const step of teardown.reverse()) await step()
})

const metrics = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body

/** Calls per command since the last CONFIG RESETSTAT (`config` and `info` left out). */
async function commandCalls(): Promise<Record<string, number>> {
  const calls: Record<string, number> = {}
  for (const match of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    if (!/^(config|info)/.test(match[1]!)) calls[match[1]!] = Number(match[2])
  return calls
}

/** until()'s options here: each check asks Redis or /metrics, so a 50 ms poll; 30 s for the start rebuild. */
const poll = { timeoutMs: 30_000, everyMs: 50 }

describe('a burst of GETs of missing ids', () => {
  it(`${BURST} at once: all 404, no database query, no negative key, a handful of Redis commands`, async () => {
    const owner = await registerUser(app, 'burst_owner')
    const video = await createVideo(app, owner.auth)
    // the start rebuild built the filter; a replica, where the app has one, has loaded it
    await until(async () => (await redis.keys(`${prefix}:bloom:*:meta`)).length === 1, poll)
    await until(
      async () => (await redis.hget((await redis.keys(`${prefix}:bloom:*:meta`))[0]!, 'ready')) !== null,
      poll,
    )
    await until(
      async () => !/^floodgate_bloom_replica_state\{filter="videos"\} [02]$/m.test(await metrics()),
      poll,
    )
    expect((await app.inject({ method: 'GET', url: `/videos/${video.id}` })).statusCode).toBe(200)

    const queriesBefore = await dbQueries(app)
    await (redis as Redis).config('RESETSTAT')
    const started = performance.now()
    const statuses = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        app.inject({ method: 'GET', url: `/videos/${800_000_000 + i}` }).then((res) => res.statusCode),
      ),
    )
    const burstMs = performance.now() - started
    const calls = await commandCalls()
    const queries = (await dbQueries(app)) - queriesBefore
    // keys of the burst's ids (the video read above has its own entry)
    const negativeKeys = (await redis.keys(`${prefix}:c:video:*8000*`)).length
    console.log('burst of missing ids', {
      burst: BURST,
      burstMs: Math.round(burstMs),
      queries,
      negativeKeys,
      calls,
    })

    expect(statuses.filter((s) => s === 404).length).toBe(BURST)
    expect(queries).toBe(0)
    expect(negativeKeys).toBe(0)
    expect(Object.values(calls).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10)
    const shown = await metrics()
    expect(shown).toMatch(/^floodgate_bloom_replica_state\{filter="videos"\} 1$/m)
    expect(shown).toMatch(/^floodgate_bloom_replica_syncs_total\{filter="videos"\} [1-9]\d*$/m)
    expect(shown).toMatch(
      /^floodgate_bloom_replica_items_total\{filter="videos",answer="local_absent"\} [1-9]\d*$/m,
    )
  }, 120_000)
})

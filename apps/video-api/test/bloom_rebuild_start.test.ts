import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '@floodgate/test-support'
import { BloomFilter, createRedisClient, type RedisClient } from 'floodgate'
import { Redis } from 'ioredis'
import pino from 'pino'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installVideoCache, type VideoCache } from '../src/cache/install.js'
import type { VideoCacheSettings } from '../src/cache/settings.js'
import { type LocalRedis, startLocalRedis } from '../src/redis/local_server.js'
import { SqlVideoReader } from '../src/videos/reader.js'
import { VideoWriter } from '../src/videos/writer.js'
import { createTestDatabase, type TestDatabase } from './support/database.js'
import { heldSource } from './support/held_source.js'

// A private redis-server: these tests make Redis slow or absent.
const dir = mkdtempSync(join(tmpdir(), 'va-bloom-start-'))
let port: number
let server: LocalRedis
let database: TestDatabase
const url = () => `redis://127.0.0.1:${port}`
beforeAll(async () => {
  port = await freePort()
  server = await startLocalRedis(dir, port)
  database = await createTestDatabase('bloom_start')
})
afterAll(async () => {
  await database?.close()
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** A request-path client (50 ms per command, no offline queue, like the service's), once ready. */
async function readyClient(): Promise<RedisClient> {
  const redis = createRedisClient(url())
  redis.on('error', () => {})
  await new Promise((resolve) => redis.once('ready', resolve))
  return redis
}

interface Line {
  level: number
  msg: string
  [k: string]: unknown
}

const BLOOM = { bloomBits: 10_000, bloomHashes: 3 }

/** The cache as the app installs it, on a request-path client with the default 50 ms timeout. */
function install(redis: RedisClient, prefix: string, settings: VideoCacheSettings = {}) {
  const lines: Line[] = []
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Line) })
  const cache: VideoCache = installVideoCache(
    {
      db: database.db,
      redis,
      prefix,
      registry: new Registry(),
      log,
      reader: new SqlVideoReader(database.db),
      writer: new VideoWriter(database.db),
    },
    { ...BLOOM, bloomRebuildRetryBaseMs: 300, bloomRebuildRetryMaxMs: 1_200, ...settings },
  )
  return { cache, lines }
}

/** Resolves when a line matching `test` is logged (checked every 20 ms, up to `ms`). */
async function logged(lines: Line[], test: (l: Line) => boolean, ms = 10_000): Promise<Line> {
  const deadline = Date.now() + ms
  for (;;) {
    const line = lines.find(test)
    if (line) return line
    if (Date.now() > deadline) throw new Error(`not logged within ${ms} ms: ${JSON.stringify(lines)}`)
    await sleep(20)
  }
}

/** Blocks the server for `ms` with a busy script (DEBUG SLEEP is refused on non-local setups). */
function busy(ms: number): { done: Promise<unknown>; client: Redis } {
  const client = new Redis(url())
  const done = client.eval(
    `local s = redis.call('TIME') repeat local n = redis.call('TIME') until (n[1] - s[1]) * 1e6 + n[2] - s[2] > ${ms * 1000} return 1`,
    0,
  )
  return { done, client }
}

describe('Bloom rebuild at start', () => {
  it('is not failed by a Redis slower than the request path timeout (50 ms): own connection, longer timeout', async () => {
    const redis = await readyClient()
    const blocker = busy(400)
    await sleep(30)
    const { cache, lines } = install(redis, 'slow')
    await cache.rebuilt
    await blocker.done
    expect(lines.filter((l) => l.level >= 40)).toEqual([])
    expect(lines.some((l) => l.msg === 'bloom filter rebuilt')).toBe(true)
    expect(await cache.bloom.isReady()).toBe(true)
    cache.close()
    blocker.client.disconnect()
    redis.disconnect()
  })

  it('Redis down at start: one summarized warning per failed attempt, capped jittered backoff, ready once Redis is back', async () => {
    const redis = await readyClient()
    await server.stop()
    const { cache, lines } = install(redis, 'down')
    // attempts 1..4 wait 300, 600, 1200, 1200 ms (cap) before jitter: wait for the 4th failure
    await logged(lines, (l) => l.level === 40 && l.attempt === 4, 30_000)
    expect(await Promise.race([cache.rebuilt.then(() => 'settled'), sleep(0, 'pending')])).toBe('pending')
    server = await startLocalRedis(dir, port)
    await cache.rebuilt
    const warnings = lines.filter((l) => l.level >= 40)
    expect(warnings.length).toBeGreaterThanOrEqual(4)
    warnings.forEach((w, i) => {
      expect(w).toMatchObject({ msg: 'bloom filter rebuild failed; retrying', attempt: i + 1 })
      const ceiling = Math.min(1_200, 300 * 2 ** i)
      expect(w.retryInMs).toBeGreaterThanOrEqual(ceiling / 2)
      expect(w.retryInMs).toBeLessThanOrEqual(ceiling)
      expect(typeof w.cause).toBe('string')
      expect(w.err).toBeUndefined() // no stack traces
    })
    expect(lines.at(-1)?.msg).toBe('bloom filter rebuilt')
    // the rebuild reconnects on its own connection; this client's backoff may still be running
    if (redis.status !== 'ready') await once(redis, 'ready')
    expect(await cache.bloom.isReady()).toBe(true)
    cache.close()
    redis.disconnect()
  }, 60_000)

  it('close() ends the retries at once: rebuilt settles, no further attempt is logged', async () => {
    const redis = await readyClient()
    await server.stop()
    try {
      // a long wait between attempts: only close() can end it early
      const { cache, lines } = install(redis, 'closing', { bloomRebuildRetryBaseMs: 60_000 })
      await logged(lines, (l) => l.level === 40)
      const closedAt = Date.now()
      cache.close()
      await cache.rebuilt
      expect(Date.now() - closedAt).toBeLessThan(5_000)
      const count = lines.length
      await sleep(300)
      expect(lines.length).toBe(count)
      expect(lines.filter((l) => l.level >= 40)).toHaveLength(1)
    } finally {
      server = await startLocalRedis(dir, port)
      redis.disconnect()
    }
  }, 30_000)

  it('another instance holding the rebuild lock: waits, and ends when that instance publishes', async () => {
    const redis = await readyClient()
    const other = new BloomFilter({ redis, prefix: 'elsewhere', name: 'videos', bits: 10_000, hashes: 3 })
    const held = heldSource(['1', '2', '3'])
    const otherRebuild = other.rebuild(held.source)
    await held.reading
    const { cache, lines } = install(redis, 'elsewhere')
    await logged(lines, (l) => l.msg === 'bloom filter rebuild running elsewhere; waiting')
    held.release()
    const result = await otherRebuild
    await cache.rebuilt
    // Usually the loop sees the published generation; if the other instance published and released
    // its lock between our check and our next attempt, our own rebuild ran after it instead.
    const last = lines.at(-1)
    if (last?.msg === 'bloom filter rebuilt') expect(last.generation).toBeGreaterThan(result.generation)
    else
      expect(last).toMatchObject({
        msg: 'bloom filter rebuilt by another instance',
        generation: result.generation,
      })
    expect(lines.filter((l) => l.level >= 40)).toEqual([])
    expect(await cache.bloom.isReady()).toBe(true)
    cache.close()
    redis.disconnect()
  }, 30_000)
})

describe('Bloom filter lost after start (Redis lost its data)', () => {
  it('a query that finds it missing starts the same rebuild: ready again without a restart', async () => {
    const redis = await readyClient()
    const { cache, lines } = install(redis, 'lost')
    await cache.rebuilt
    const built = await logged(lines, (l) => l.msg === 'bloom filter rebuilt')
    // what a restart without persistence leaves: no meta hash, no shard keys
    const { meta, shards } = cache.bloom.keys(Number(built.generation))
    await redis.del(meta, ...shards)
    expect(await cache.bloom.mightContain(['1'])).toEqual([true]) // fails open: "maybe"
    await logged(
      lines,
      (l) => l.msg === 'bloom filter missing in Redis (data lost?); rebuilding it from PostgreSQL',
    )
    await logged(lines, (l) => l.msg === 'bloom filter rebuilt' && l !== built)
    expect(await cache.bloom.isReady()).toBe(true)
    expect(await cache.bloom.mightContain(['900000001'])).toEqual([false])
    // one rebuild for the loss, however many queries found the filter missing
    expect(lines.filter((l) => l.msg === 'bloom filter rebuilt')).toHaveLength(2)
    cache.close()
    redis.disconnect()
  }, 30_000)

  it('not while the filter is merely unbuilt on an instance told not to rebuild it', async () => {
    const redis = await readyClient()
    const { cache, lines } = install(redis, 'unbuilt', { rebuildBloomAtStart: false })
    expect(await cache.bloom.mightContain(['1'])).toEqual([true])
    await sleep(200) // nothing to wait for: a rebuild would have logged by then
    expect(lines).toEqual([])
    expect(await cache.bloom.isReady()).toBe(false)
    cache.close()
    redis.disconnect()
  })
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createRedisClient, type RedisClient } from 'floodgate'
import { Redis } from 'ioredis'
import pino from 'pino'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installVideoCache, type VideoCache } from '../src/cache/install.js'
import { type LocalRedis, startLocalRedis } from '../src/redis/local_server.js'
import { SqlVideoReader } from '../src/videos/reader.js'
import { VideoWriter } from '../src/videos/writer.js'
import { createTestDatabase, type TestDatabase } from './support/database.js'
import { freePort } from './support/ports.js'

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

/** The cache as the app installs it, on a request-path client with the default 50 ms timeout. */
function install(redis: RedisClient, prefix: string) {
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
    { bloomBits: 10_000, bloomHashes: 3, bloomRebuildRetryBaseMs: 300, bloomRebuildAttempts: 4 },
  )
  return { cache, lines }
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

  it('logs one summarized warning per failed attempt and retries with backoff until Redis is back', async () => {
    const redis = await readyClient()
    await server.stop()
    const { cache, lines } = install(redis, 'down')
    const deadline = Date.now() + 5000
    while (!lines.some((l) => l.level === 40) && Date.now() < deadline) await sleep(20)
    server = await startLocalRedis(dir, port)
    await cache.rebuilt
    const warnings = lines.filter((l) => l.level >= 40)
    expect(warnings.length).toBeGreaterThanOrEqual(1)
    expect(warnings.length).toBeLessThanOrEqual(3) // attempts - 1, at most
    warnings.forEach((w, i) => {
      expect(w).toMatchObject({ msg: 'bloom filter rebuild failed; retrying', attempt: i + 1, attempts: 4 })
      expect(w.retryInMs).toBe(300 * 2 ** i)
      expect(typeof w.cause).toBe('string')
      expect(w.err).toBeUndefined() // no stack traces
    })
    expect(lines.at(-1)?.msg).toBe('bloom filter rebuilt')
    cache.close()
    redis.disconnect()
  }, 20_000)
})

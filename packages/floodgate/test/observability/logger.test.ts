import { afterAll, describe, expect, it } from 'vitest'
import {
  BloomFilter,
  createCache,
  createRateLimiter,
  createRedisClient,
  type LogFields,
  type Logger,
  StreamGroupConsumer,
} from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'
import { PrivateRedis } from '../support/redis_server.js'

const redis = testRedisClient()
const prefix = uniquePrefix('logger')
const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 })

afterAll(async () => {
  client.disconnect()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

/** A pino-shaped logger that records its lines. */
function recording() {
  const lines: { level: 'warn' | 'error'; fields: LogFields; message: string }[] = []
  const logger: Logger = {
    warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
    error: (fields, message) => lines.push({ level: 'error', fields, message }),
  }
  return { logger, lines }
}

describe('one Logger for every primitive (option `logger`)', () => {
  it('the cache logs an invalidation it gave up, at error', async () => {
    const { logger, lines } = recording()
    const cache = createCache<string>({
      redis: client,
      prefix,
      name: 'logged',
      redisTimeoutMs: 1000,
      invalidateRetries: 0, // give up at once instead of after 5 retries (100 ms doubling)
      logger,
    })
    await cache.ready
    await cache.getOrLoad('k', async () => 'v')
    await redis.hset(`${prefix}:c:logged:{k}:ver`, 'x', '1') // invalidate-2.lua's INCR now fails
    await cache.invalidate('k')
    await expect.poll(() => lines.length).toBe(1)
    expect(lines[0]).toMatchObject({
      level: 'error',
      fields: { primitive: 'cache', cache: 'logged', key: 'k', task: 'invalidate' },
    })
    cache.close()
  })

  it('a Bloom filter logs a query that failed open on a Redis error, once per interval', async () => {
    const server = await PrivateRedis.start()
    const dead = createRedisClient(server.url, { commandTimeoutMs: 200 })
    dead.on('error', () => {})
    await server.kill()
    const { logger, lines } = recording()
    const filter = new BloomFilter({ redis: dead, prefix, name: 'ids', bits: 1024, hashes: 3, logger })
    expect(await filter.mightContain(['a'])).toEqual([true])
    expect(await filter.mightContain(['b'])).toEqual([true])
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      level: 'warn',
      fields: { primitive: 'bloomFilter', filter: 'ids', reason: 'redis-error' },
    })
    dead.disconnect()
    await server.destroy()
  })

  it('a limiter answering without Redis logs one line per fallback source per interval, counts every one', async () => {
    const server = await PrivateRedis.start()
    const dead = createRedisClient(server.url, { commandTimeoutMs: 200 })
    dead.on('error', () => {})
    const { logger, lines } = recording()
    const limiter = createRateLimiter({
      redis: dead,
      prefix,
      name: 'logged',
      algorithm: 'fixedWindow',
      limit: 5,
      windowMs: 60_000,
      logger,
    })
    expect((await limiter.limit('warm')).source).toBe('redis') // connected once: no start-up wait below
    await server.kill()
    const fallbacks: unknown[] = []
    limiter.events.on('fallback', (event) => fallbacks.push(event))
    for (let i = 0; i < 20; i++) await limiter.limit(`user-${i}`)
    expect(fallbacks).toHaveLength(20)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      level: 'warn',
      fields: { primitive: 'rateLimiter', policy: 'logged', key: 'user-0', suppressed: 0 },
    })
    dead.disconnect()
    await server.destroy()
  })

  it('a stream consumer logs a failed apply at warn', async () => {
    const { logger, lines } = recording()
    const stream = `${prefix}:s`
    await redis.xadd(stream, '*', 'n', '1')
    const consumer = new StreamGroupConsumer(client, {
      sources: [{ stream, deadLetter: `${stream}:dead` }],
      group: 'g',
      handler: async () => {
        throw new Error('db down')
      },
      logger,
    })
    consumer.start()
    await expect.poll(() => lines.length, { timeout: 5000 }).toBeGreaterThan(0)
    await consumer.stop()
    expect(lines[0]).toMatchObject({
      level: 'warn',
      fields: { primitive: 'streamConsumer', group: 'g', phase: 'apply' },
    })
  })
})

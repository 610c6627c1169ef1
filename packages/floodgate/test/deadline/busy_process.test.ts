import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type CacheOutcome,
  createCache,
  createRateLimiter,
  createRedisClient,
  type RedisClient,
} from '../../src/index.js'
import { blockLoop } from '../support/busy_loop.js'
import { deleteByPrefix, TEST_REDIS_TARGET, uniquePrefix } from '../support/redis.js'

// Everything here runs with the library's defaults (client, cache, limiter): the point is what
// the defaults do when the process, not Redis, is slow.
let redis: RedisClient
const prefix = uniquePrefix('busy')

beforeAll(async () => {
  redis = createRedisClient(TEST_REDIS_TARGET)
  redis.on('error', () => {})
  await new Promise((resolve) => redis.once('ready', resolve))
})
afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('a busy process on a healthy Redis, with the defaults', () => {
  it('the limiter decides in Redis even when the event loop blocks past timeoutMs', async () => {
    const limiter = createRateLimiter({
      redis,
      prefix,
      name: 'busy',
      algorithm: 'slidingWindow',
      limit: 5,
      windowMs: 60_000,
    })
    const sources: string[] = []
    for (let i = 0; i < 8; i++) {
      const decision = limiter.limit('one-key')
      await new Promise((resolve) => setImmediate(resolve)) // the decision's batch leaves, then the loop blocks
      blockLoop(150)
      sources.push((await decision).source)
    }
    expect(sources).toEqual(Array(8).fill('redis'))
  })

  it('the cache reads L2 and keeps its breaker closed when the event loop blocks past redisTimeoutMs', async () => {
    const cache = createCache<string>({ redis, prefix, name: 'busy', l1: false })
    const outcomes: CacheOutcome[] = []
    cache.events.on('outcome', ({ outcome }) => outcomes.push(outcome))
    await cache.ready
    await cache.getOrLoad('k', async () => 'v')
    for (let i = 0; i < 8; i++) {
      const read = cache.getOrLoad('k', async () => 'loaded again')
      blockLoop(150)
      expect(await read).toBe('v')
    }
    expect(outcomes.filter((o) => o === 'redis_error')).toEqual([])
    expect(outcomes.filter((o) => o === 'l2_hit')).toHaveLength(8)
    expect(cache.breaker.state).toBe('closed')
    cache.close()
  })
})

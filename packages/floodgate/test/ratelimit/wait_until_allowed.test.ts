import { afterAll, describe, expect, it } from 'vitest'
import { createRateLimiter, KeySpace, RateLimitWaitError, waitUntilAllowed } from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const keySpace = new KeySpace(uniquePrefix('rl-wait'))

afterAll(async () => {
  await deleteByPrefix(redis, keySpace.prefix)
  redis.disconnect()
})

// 2 units per 400 ms: the third call in a window must wait for the next one
const limiter = createRateLimiter({
  redis,
  prefix: keySpace,
  name: 'jobs',
  algorithm: 'gcra',
  limit: 2,
  burst: 2,
  windowMs: 400,
  timeoutMs: 2000,
})

describe('waitUntilAllowed', () => {
  it('sleeps retryAfterMs and returns the admitting result', async () => {
    await limiter.limit('a', { cost: 2 })
    const started = performance.now()
    const result = await waitUntilAllowed(limiter, 'a', { maxWaitMs: 2000 })
    const waitedMs = performance.now() - started
    expect(result.allowed).toBe(true)
    expect(waitedMs).toBeGreaterThanOrEqual(150) // one unit refills every 200 ms
    expect(waitedMs).toBeLessThan(1500)
  })

  it('gives up at once when the next try would fall past maxWaitMs, or the cost never fits', async () => {
    await limiter.limit('b', { cost: 2 })
    await expect(waitUntilAllowed(limiter, 'b', { maxWaitMs: 10 })).rejects.toBeInstanceOf(RateLimitWaitError)
    await expect(waitUntilAllowed(limiter, 'b', { cost: 3 })).rejects.toThrow(/never be admitted/)
  })

  it('stops when the signal aborts', async () => {
    await limiter.limit('c', { cost: 2 })
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('shutting down')), 20)
    await expect(waitUntilAllowed(limiter, 'c', { signal: controller.signal })).rejects.toThrow(
      'shutting down',
    )
  })
})

import { afterAll, describe, expect, it } from 'vitest'
import { createRateLimiter, KeySpace, RATE_LIMIT_ALGORITHMS, rateLimitKeys } from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

// peek() reads the quota left without consuming or writing; reset() gives it back.
const redis = testRedisClient()
const keySpace = new KeySpace(uniquePrefix('rl-peek'))

afterAll(async () => {
  await deleteByPrefix(redis, keySpace.prefix)
  redis.disconnect()
})

describe.each(RATE_LIMIT_ALGORITHMS)('%s', (algorithm) => {
  const limiter = createRateLimiter({
    redis,
    prefix: keySpace,
    algorithm,
    name: algorithm,
    limit: 5,
    windowMs: 60_000, // nothing refills or slides during the test
    timeoutMs: 2000,
    blockedCache: true,
  })

  it('peek() reports what limit() would leave, consuming and writing nothing', async () => {
    expect((await limiter.peek('fresh')).remaining).toBe(5)
    const keys = rateLimitKeys(keySpace, limiter.policy, 'fresh')
    expect(await redis.exists(...keys)).toBe(0) // a peek at a fresh key creates nothing

    await limiter.limit('u', { cost: 2 })
    const dumps = await Promise.all(rateLimitKeys(keySpace, limiter.policy, 'u').map((k) => redis.dump(k)))
    const first = await limiter.peek('u')
    const second = await limiter.peek('u')
    expect([first.remaining, second.remaining]).toEqual([3, 3])
    expect(first.resetAtMs).toBeGreaterThan(first.nowMs)
    expect(first.limit).toBe(5)
    const after = await Promise.all(rateLimitKeys(keySpace, limiter.policy, 'u').map((k) => redis.dump(k)))
    expect(after).toEqual(dumps)
    expect((await limiter.limit('u')).remaining).toBe(2)
  })

  it('reset() gives the key its full quota back, including a remembered block', async () => {
    for (let i = 0; i < 6; i++) await limiter.limit('r')
    expect((await limiter.limit('r')).source).toBe('blockedCache')
    await limiter.reset('r')
    expect((await limiter.peek('r')).remaining).toBe(5)
    const next = await limiter.limit('r')
    expect([next.allowed, next.remaining, next.source]).toEqual([true, 4, 'redis'])
  })
})

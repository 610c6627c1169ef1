import { afterAll, describe, expect, it } from 'vitest'
import { createRateLimiter, KeySpace, limitAll } from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const keySpace = new KeySpace(uniquePrefix('rl-all'))

afterAll(async () => {
  await deleteByPrefix(redis, keySpace.prefix)
  redis.disconnect()
})

const make = (name: string, limit: number, algorithm: 'fixedWindow' | 'gcra') =>
  createRateLimiter({ redis, prefix: keySpace, name, algorithm, limit, windowMs: 60_000, timeoutMs: 2000 })

describe('limitAll: several policies, all or nothing', () => {
  it('consumes from every policy or from none', async () => {
    const burst = make('burst', 2, 'gcra')
    const daily = make('daily', 5, 'fixedWindow')
    const checks = [
      { limiter: burst, key: 'u1' },
      { limiter: daily, key: 'u1' },
    ]
    expect((await limitAll(checks)).allowed).toBe(true)
    expect((await limitAll(checks)).allowed).toBe(true)
    const third = await limitAll(checks)
    expect(third.allowed).toBe(false)
    expect(third.blockedBy?.policy.name).toBe('burst')
    expect(third.blockedBy?.retryAfterMs).toBeGreaterThan(0)
    // the refused request took nothing from the daily quota: 5 - 2 left, not 5 - 3
    expect((await daily.peek('u1')).remaining).toBe(3)
  })

  it('the second policy refusing leaves the first untouched too', async () => {
    const perMinute = make('minute', 10, 'fixedWindow')
    const strict = make('strict', 1, 'fixedWindow')
    const checks = [
      { limiter: perMinute, key: 'u2' },
      { limiter: strict, key: 'u2' },
    ]
    expect((await limitAll(checks)).allowed).toBe(true)
    const refused = await limitAll(checks)
    expect([refused.allowed, refused.blockedBy?.policy.name]).toEqual([false, 'strict'])
    expect((await perMinute.peek('u2')).remaining).toBe(9)
  })
})

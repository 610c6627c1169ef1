import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { createRateLimiter, KeySpace, limitAll } from '../../src/index.js'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, TEST_REDIS_URL, testRedis, testRedisClient, uniquePrefix } from '../support/redis.js'

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

  it('3 processes × 40 concurrent checks: no policy admits past its limit', async () => {
    const racePrefix = `${keySpace.prefix}:race`
    // fixed windows are aligned to the clock: a boundary between the workers' decisions and the peeks
    // below makes the peeks read a fresh window (seen in CI with one-minute windows; an hour makes
    // that about 60 times rarer)
    const windowMs = 3_600_000
    const workers = Array.from({ length: 3 }, () =>
      spawnWorker(new URL('./workers/limit_all_fire.ts', import.meta.url), [
        TEST_REDIS_URL,
        racePrefix,
        '3',
        '40',
        '30', // outer: consumed first
        '10', // inner: the binding limit
        String(windowMs),
      ]),
    )
    const reports = (await Promise.all(
      workers.map((w) => w.waitFor((m) => typeof m === 'object' && m !== null && 'admitted' in m)),
    )) as { admitted: number }[]
    await Promise.all(workers.map((w) => w.exited))
    const admitted = reports.reduce((sum, r) => sum + r.admitted, 0)
    // the workers decide on the single node at TEST_REDIS_URL (also in the cluster pass): read there
    const single = testRedis()
    onTestFinished(async () => {
      await deleteByPrefix(single, racePrefix)
      single.disconnect()
    })
    const outer = createRateLimiter({
      redis: single,
      prefix: racePrefix,
      name: 'outer',
      algorithm: 'fixedWindow',
      limit: 30,
      windowMs,
    })
    const inner = createRateLimiter({
      redis: single,
      prefix: racePrefix,
      name: 'inner',
      algorithm: 'fixedWindow',
      limit: 10,
      windowMs,
    })
    const outerTaken = 30 - (await outer.peek('user')).remaining
    const innerTaken = 10 - (await inner.peek('user')).remaining
    expect(admitted).toBe(innerTaken)
    expect(admitted).toBeLessThanOrEqual(10)
    expect(outerTaken).toBeLessThanOrEqual(30)
    // scarcest first: the racers for inner's last units are refused before they touch outer
    expect(outerTaken).toBe(admitted)
  })
})

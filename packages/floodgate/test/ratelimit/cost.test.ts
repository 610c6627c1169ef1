import { afterAll, describe, expect, it } from 'vitest'
import {
  createRateLimiter,
  InvalidArgumentError,
  KeySpace,
  type RateLimitAlgorithm,
  rateLimitKeys,
} from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

// Test 6: weighted cost, cost > limit, rejected requests consume nothing; plus TTL
// re-arming, the blocked cache and option validation.
const redis = testRedisClient()
const keySpace = new KeySpace(uniquePrefix('rl-cost'))
const ALGORITHMS: RateLimitAlgorithm[] = ['fixedWindow', 'slidingLog', 'slidingWindow', 'tokenBucket', 'gcra']

afterAll(async () => {
  await deleteByPrefix(redis, keySpace.prefix)
  redis.disconnect()
})

const limiterFor = (algorithm: RateLimitAlgorithm, extra: { blockedCache?: boolean } = {}) =>
  createRateLimiter({
    redis,
    prefix: keySpace,
    algorithm,
    name: `${algorithm}-${Math.random().toString(36).slice(2)}`,
    limit: 10,
    windowMs: 60_000, // long enough that nothing refills or slides during the test
    timeoutMs: 2000,
    fallback: 'failClosed',
    ...extra,
  })

describe.each(ALGORITHMS)('%s cost', (algorithm) => {
  it('takes weighted costs, rejects what does not fit without consuming it', async () => {
    const limiter = limiterFor(algorithm)
    const a = await limiter.limit('u', { cost: 4 })
    expect([a.allowed, a.remaining, a.source]).toEqual([true, 6, 'redis'])
    const b = await limiter.limit('u', { cost: 4 })
    expect([b.allowed, b.remaining]).toEqual([true, 2])
    const c = await limiter.limit('u', { cost: 3 }) // 3 > 2 left
    expect([c.allowed, c.remaining]).toEqual([false, 2])
    expect(c.retryAfterMs).toBeGreaterThan(0)
    const d = await limiter.limit('u', { cost: 2 }) // the rejected 3 consumed nothing
    expect([d.allowed, d.remaining]).toEqual([true, 0])
    const e = await limiter.limit('u')
    expect(e.allowed).toBe(false)
  })

  it('rejects a cost above the limit with retryAfterMs -1 and consumes nothing', async () => {
    const limiter = limiterFor(algorithm)
    const big = await limiter.limit('v', { cost: 11 })
    expect([big.allowed, big.retryAfterMs, big.remaining]).toEqual([false, -1, 10])
    const full = await limiter.limit('v', { cost: 10 })
    expect([full.allowed, full.remaining]).toEqual([true, 0])
  })

  it('re-arms a TTL that went missing', async () => {
    const limiter = limiterFor(algorithm)
    await limiter.limit('w', { cost: 3 })
    const keys = rateLimitKeys(keySpace, limiter.policy, 'w')
    const stored: string[] = []
    for (const key of keys) if ((await redis.exists(key)) === 1) stored.push(key)
    expect(stored.length).toBeGreaterThan(0)
    for (const key of stored) await redis.persist(key)
    const again = await limiter.limit('w', { cost: 3 })
    expect([again.allowed, again.remaining]).toEqual([true, 4]) // count kept
    for (const key of stored) expect(await redis.pttl(key)).toBeGreaterThan(0)
    // and on a rejected request, too
    for (const key of stored) await redis.persist(key)
    expect((await limiter.limit('w', { cost: 5 })).allowed).toBe(false)
    for (const key of stored) expect(await redis.pttl(key)).toBeGreaterThan(0)
  })
})

describe('keys', () => {
  it('stores under the keys rateLimitKeys names, braces in the caller key escaped', async () => {
    for (const key of ['plain-key', 'a{b}c', '}{']) {
      const limiter = limiterFor('fixedWindow')
      await limiter.limit(key, { cost: 2 })
      const [counter] = rateLimitKeys(keySpace, limiter.policy, key)
      expect(counter).not.toMatch(/\{.*\{|\}.*\}/) // one hash tag, whatever the key holds
      expect(await redis.get(counter!)).toBe('2')
    }
  })
})

describe('token bucket', () => {
  it('reads a bucket an earlier version stored as HASH { tokens, ts } and replaces it', async () => {
    const limiter = limiterFor('tokenBucket')
    const [bucket] = rateLimitKeys(keySpace, limiter.policy, 'legacy')
    const [seconds, micros] = await redis.time()
    const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    await redis.hset(bucket!, 'tokens', '3.5', 'ts', String(nowMs))
    await redis.pexpire(bucket!, 60_000)
    const rejected = await limiter.limit('legacy', { cost: 4 })
    expect([rejected.allowed, rejected.remaining]).toEqual([false, 3])
    expect(await redis.type(bucket!)).toBe('hash') // a rejection writes nothing
    const admitted = await limiter.limit('legacy', { cost: 3 })
    expect([admitted.allowed, admitted.remaining]).toEqual([true, 0])
    expect(await redis.type(bucket!)).toBe('string')
    expect(await redis.pttl(bucket!)).toBeGreaterThan(0)
    expect((await limiter.limit('legacy')).allowed).toBe(false) // 0.5 token left (a bit more by now)
  })
})

describe('sliding log', () => {
  it('records one unique member per admitted unit and none for a rejected request', async () => {
    const limiter = limiterFor('slidingLog')
    await Promise.all([limiter.limit('m', { cost: 3 }), limiter.limit('m', { cost: 3 }), limiter.limit('m')])
    await limiter.limit('m', { cost: 5 }) // rejected: 7 used, 3 left
    const [log] = rateLimitKeys(keySpace, limiter.policy, 'm')
    expect(await redis.zcard(log!)).toBe(7)
  })

  it('never reuses a member that is already taken (e.g. after the Redis clock stepped back)', async () => {
    const limiter = createRateLimiter({
      redis,
      prefix: keySpace,
      algorithm: 'slidingLog',
      name: `taken-${Math.random().toString(36).slice(2)}`,
      limit: 10_000,
      windowMs: 60_000,
      timeoutMs: 2000,
      fallback: 'failClosed',
    })
    const [log] = rateLimitKeys(keySpace, limiter.policy, 't')
    // K members "<ms>-<K + 1>" for every ms around now: the name the next unit would take
    // ("<now>-<count + 1>") is taken, whatever ms the script runs in.
    const [seconds, micros] = await redis.time()
    const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    const K = 4000
    const members: (string | number)[] = []
    for (let ms = nowMs - 1000; ms < nowMs - 1000 + K; ms++) members.push(nowMs + 600_000, `${ms}-${K + 1}`)
    await redis.zadd(log!, ...members)
    const batch = await limiter.limit('t', { cost: 3 })
    expect([batch.allowed, batch.remaining]).toEqual([true, 10_000 - K - 3])
    expect(await redis.zcard(log!)).toBe(K + 3)
    const one = await limiter.limit('t')
    expect(one.allowed).toBe(true)
    expect(await redis.zcard(log!)).toBe(K + 4)
    expect(await redis.zcount(log!, nowMs + 600_000, nowMs + 600_000)).toBe(K) // none overwritten
  })
})

describe('blocked cache', () => {
  it('answers a blocked key in-process until its retry time', async () => {
    const limiter = limiterFor('fixedWindow', { blockedCache: true })
    await limiter.limit('b', { cost: 10 })
    const first = await limiter.limit('b')
    expect([first.allowed, first.source]).toEqual([false, 'redis'])
    const [counter] = rateLimitKeys(keySpace, limiter.policy, 'b')
    await redis.del(counter!) // Redis would admit now; the cache still blocks without asking
    const second = await limiter.limit('b')
    expect([second.allowed, second.source, second.remaining]).toEqual([false, 'blockedCache', 0])
    expect(second.retryAfterMs).toBeGreaterThan(0)
    expect(second.retryAfterMs).toBeLessThanOrEqual(first.retryAfterMs)
  })
})

describe('options', () => {
  const base = { redis, prefix: keySpace, algorithm: 'gcra' as const, limit: 5, windowMs: 1000 }
  it.each([
    ['limit', { limit: 0 }],
    ['limit', { limit: 1.5 }],
    ['windowMs', { windowMs: -1 }],
    ['windowMs', { windowMs: 10.5 }],
    ['burst', { burst: 0 }],
    ['timeoutMs', { timeoutMs: 0 }],
    ['algorithm', { algorithm: 'leakyBucket' }],
    ['fallback.insurance.share', { fallback: { insurance: { share: 0 } } }],
    ['fallback', { fallback: 'sometimes' }],
    ['name', { name: 'a"b' }],
  ])('rejects a bad %s', (field, patch) => {
    const error = (() => {
      try {
        createRateLimiter({ ...base, ...(patch as object) })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect((error as InvalidArgumentError).field).toBe(field)
  })

  it.each([0, -1, 1.5, Number.NaN])('rejects cost %s', async (cost) => {
    const limiter = createRateLimiter(base)
    await expect(limiter.limit('k', { cost })).rejects.toMatchObject({ field: 'cost' })
  })

  it('rejects an empty key', async () => {
    await expect(createRateLimiter(base).limit('')).rejects.toBeInstanceOf(InvalidArgumentError)
  })
})

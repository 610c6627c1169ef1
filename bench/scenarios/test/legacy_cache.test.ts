import { randomBytes } from 'node:crypto'
import { TEST_REDIS_URL } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { LegacyCache, NULL_SENTINEL } from '../legacy/legacy_cache.js'

const redis = new Redis(TEST_REDIS_URL)
const prefix = `benchtest:legacy:${randomBytes(4).toString('hex')}`

afterAll(async () => {
  const keys = ['a', 'missing', 'b', 'c'].flatMap((k) => [
    `${prefix}:legacy:{${k}}`,
    `${prefix}:legacy:{${k}}:lock`,
  ])
  await redis.del(...keys)
  redis.disconnect()
})

describe('LegacyCache (the older design)', () => {
  it('caches a value with the fixed TTL and a miss as the null sentinel', async () => {
    const cache = new LegacyCache(redis, prefix, { ttlMs: 5_000, nullTtlMs: 2_000 })
    let loads = 0
    expect(await cache.get('a', async () => ++loads)).toBe(1)
    expect(await cache.get('a', async () => ++loads)).toBe(1)
    expect(loads).toBe(1)
    const ttl = await redis.pttl(`${prefix}:legacy:{a}`)
    expect(ttl).toBeGreaterThan(4_000)
    expect(ttl).toBeLessThanOrEqual(5_000)
    expect(await cache.get('missing', async () => undefined)).toBeUndefined()
    expect(await redis.get(`${prefix}:legacy:{missing}`)).toBe(NULL_SENTINEL)
    expect(await cache.get('missing', async () => 'loaded')).toBeUndefined()
  })

  it('a second instance polls (50 ms) while the first holds the lock, then reads its value: one load', async () => {
    const one = new LegacyCache(redis, prefix)
    const two = new LegacyCache(redis, prefix)
    let loads = 0
    const slow = async () => {
      loads++
      await new Promise((resolve) => setTimeout(resolve, 300))
      return 'v'
    }
    const first = one.get('b', slow)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const started = Date.now()
    const second = await two.get('b', slow)
    expect(await first).toBe('v')
    expect(second).toBe('v')
    expect(loads).toBe(1)
    expect(Date.now() - started).toBeGreaterThanOrEqual(150)
    expect(await redis.exists(`${prefix}:legacy:{b}:lock`)).toBe(0)
  })

  it('a waiter that waited lockWaitMs loads from the database itself', async () => {
    await redis.set(`${prefix}:legacy:{c}:lock`, 'someone-else', 'PX', 5_000)
    const cache = new LegacyCache(redis, prefix, { lockWaitMs: 200 })
    const started = Date.now()
    expect(await cache.get('c', async () => 'direct')).toBe('direct')
    expect(Date.now() - started).toBeGreaterThanOrEqual(200)
    expect(await redis.get(`${prefix}:legacy:{c}`)).toBeNull()
  })
})

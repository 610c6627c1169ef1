import { afterAll, describe, expect, it } from 'vitest'
import { KeySpace } from '../../src/index.js'
import { acquireScript, extendScript, releaseScript } from '../../src/lock/scripts.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const space = new KeySpace(uniquePrefix('lock-lua'))
let n = 0
function keys() {
  const name = `l${n++}`
  return { lock: space.tagged('lock', name), fence: space.tagged('lock', name, 'fence') }
}

afterAll(async () => {
  await deleteByPrefix(redis, space.prefix)
  redis.disconnect()
})

describe('acquire-2.lua', () => {
  it('sets the token with a TTL and returns 1, 2, 3… from the fence', async () => {
    const k = keys()
    expect(await acquireScript.run(redis, [k.lock, k.fence], ['t1', 1000, 0])).toBe(1)
    expect(await redis.get(k.lock)).toBe('t1')
    const pttl = await redis.pttl(k.lock)
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(1000)
    await redis.del(k.lock)
    expect(await acquireScript.run(redis, [k.lock, k.fence], ['t2', 1000, 0])).toBe(2)
    await redis.del(k.lock)
    expect(await acquireScript.run(redis, [k.lock, k.fence], ['t3', 1000, 0])).toBe(3)
    expect(await redis.pttl(k.fence)).toBe(-1)
  })

  it('returns nil and leaves lock and fence alone when held', async () => {
    const k = keys()
    expect(await acquireScript.run(redis, [k.lock, k.fence], ['a', 5000, 0])).toBe(1)
    expect(await acquireScript.run(redis, [k.lock, k.fence], ['b', 5000, 0])).toBeNull()
    expect(await redis.get(k.lock)).toBe('a')
    expect(await redis.get(k.fence)).toBe('1')
  })
})

describe('release-1.lua', () => {
  it('deletes only our token', async () => {
    const k = keys()
    await redis.set(k.lock, 'mine', 'PX', 5000)
    expect(await releaseScript.run(redis, [k.lock], ['other'])).toBe(0)
    expect(await redis.get(k.lock)).toBe('mine')
    expect(await releaseScript.run(redis, [k.lock], ['mine'])).toBe(1)
    expect(await redis.exists(k.lock)).toBe(0)
    expect(await releaseScript.run(redis, [k.lock], ['mine'])).toBe(0)
  })
})

describe('extend-1.lua', () => {
  it('resets the TTL only for our token', async () => {
    const k = keys()
    await redis.set(k.lock, 'mine', 'PX', 1000)
    expect(await extendScript.run(redis, [k.lock], ['mine', 60_000])).toBe(1)
    expect(await redis.pttl(k.lock)).toBeGreaterThan(1000)
    expect(await extendScript.run(redis, [k.lock], ['other', 120_000])).toBe(0)
    expect(await redis.pttl(k.lock)).toBeLessThanOrEqual(60_000)
    expect(await redis.get(k.lock)).toBe('mine')
  })

  it('never re-creates a missing key', async () => {
    const k = keys()
    expect(await extendScript.run(redis, [k.lock], ['mine', 5000])).toBe(0)
    expect(await redis.exists(k.lock)).toBe(0)
  })
})

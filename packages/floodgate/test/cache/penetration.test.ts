import { afterAll, describe, expect, it } from 'vitest'
import {
  BloomFilter,
  type BloomGate,
  type Cache,
  createCache,
  createRedisClient,
  notFound,
} from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('penetration')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

async function countKeys(match: string): Promise<number> {
  let cursor = '0'
  let n = 0
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000)
    cursor = next
    n += keys.length
  } while (cursor !== '0')
  return n
}

/** Two independent instances (own client, L1, singleflight), like two service processes. */
function instances(name: string, bloom?: BloomGate) {
  return [0, 1].map(() => {
    const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 })
    const cache = createCache<{ id: number }>({ redis: client, name, prefix, redisTimeoutMs: 1000, bloom })
    return { client, cache }
  })
}

async function flood(caches: Cache<{ id: number }>[], loads: Map<string, number>) {
  const ids = Array.from({ length: 10_000 }, (_, i) => `missing:${(i * 7919) % 1000}`)
  for (let offset = 0; offset < ids.length; offset += 500) {
    await Promise.all(
      ids.slice(offset, offset + 500).map(async (id, i) => {
        const value = await caches[i % caches.length]!.getOrLoad(id, async (key) => {
          loads.set(key, (loads.get(key) ?? 0) + 1)
          return notFound()
        })
        expect(value).toBeUndefined()
      }),
    )
  }
}

describe('penetration by missing ids', () => {
  it('10,000 requests over 1,000 missing ids: each id loaded at most once per negative TTL', async () => {
    const pair = instances('neg')
    await Promise.all(pair.map((p) => p.cache.ready))
    const loads = new Map<string, number>()
    await flood(
      pair.map((p) => p.cache),
      loads,
    )
    expect(loads.size).toBe(1000)
    expect(Math.max(...loads.values())).toBe(1)
    // The negative entries are in L2 with the negative TTL (default 60 s), no grace added.
    const pttl = await redis.pttl(`${prefix}:c:neg:{missing:1}`)
    expect(pttl).toBeGreaterThan(50_000)
    expect(pttl).toBeLessThanOrEqual(60_000)
    for (const p of pair) {
      p.cache.close()
      p.client.disconnect()
    }
  }, 60_000)

  it('with a Bloom gate answering "definitely absent": zero loads and zero keys written', async () => {
    let asked = 0
    const gate: BloomGate = {
      async mightContain(items) {
        asked += items.length
        return items.map((item) => !item.startsWith('missing:'))
      },
    }
    const pair = instances('bloom', gate)
    await Promise.all(pair.map((p) => p.cache.ready))
    const loads = new Map<string, number>()
    await flood(
      pair.map((p) => p.cache),
      loads,
    )
    expect(asked).toBe(10_000)
    expect(loads.size).toBe(0)
    expect(await countKeys(`${prefix}:c:bloom:*`)).toBe(0)
    for (const p of pair) {
      p.cache.close()
      p.client.disconnect()
    }
  }, 60_000)

  it('with the real BloomFilter built from the existing ids: zero loads, zero cache keys written', async () => {
    const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 })
    await new Promise((resolve) => client.once('ready', resolve))
    const bloom = new BloomFilter({
      redis: client,
      prefix: `${prefix}-bloom`,
      name: 'ids',
      expectedItems: 1000,
      falsePositiveRate: 0.001,
    })
    await bloom.rebuild(
      (async function* () {
        yield Array.from({ length: 1000 }, (_, i) => `present:${i}`)
      })(),
    )
    const pair = instances('realbloom', bloom)
    await Promise.all(pair.map((p) => p.cache.ready))
    const loads = new Map<string, number>()
    // Hashing is deterministic: at p = 0.001 none of these 1000 ids is a false positive.
    // (One would cost a load and a negative entry, never a wrong answer.)
    await flood(
      pair.map((p) => p.cache),
      loads,
    )
    expect(loads.size).toBe(0)
    expect(await countKeys(`${prefix}:c:realbloom:*`)).toBe(0)
    // Existing ids pass the gate and load normally.
    expect(await pair[0]!.cache.getOrLoad('present:7', async () => ({ id: 7 }))).toEqual({ id: 7 })
    for (const p of pair) {
      p.cache.close()
      p.client.disconnect()
    }
    client.disconnect()
  }, 60_000)

  it('the gate is asked only after an L2 miss: L2 hits and negative entries cost no Bloom call', async () => {
    const asked: string[] = []
    const gate: BloomGate = {
      async mightContain(items) {
        asked.push(...items)
        return items.map((item) => !item.startsWith('missing:'))
      },
    }
    // Two instances: the second has an empty L1, so its reads go to L2.
    const [a, b] = instances('bloomorder', gate)
    await Promise.all([a!.cache.ready, b!.cache.ready])
    let loads = 0
    const loader = async (key: string) => {
      loads++
      return key.startsWith('gone:') ? notFound() : { id: 1 }
    }
    expect(await a!.cache.getOrLoad('present:1', loader)).toEqual({ id: 1 })
    expect(await a!.cache.getOrLoad('gone:1', loader)).toBeUndefined()
    expect(asked).toEqual(['present:1', 'gone:1']) // cold misses ask the gate before loading
    expect(loads).toBe(2)
    expect(await b!.cache.getOrLoad('present:1', loader)).toEqual({ id: 1 }) // L2 hit
    expect(await b!.cache.getOrLoad('gone:1', loader)).toBeUndefined() // negative entry in L2
    expect(asked).toEqual(['present:1', 'gone:1'])
    expect(loads).toBe(2)
    // A never-seen absent id: GET, then the gate rejects it: no load, no key.
    expect(await b!.cache.getOrLoad('missing:1', loader)).toBeUndefined()
    expect(asked).toEqual(['present:1', 'gone:1', 'missing:1'])
    expect(loads).toBe(2)
    expect(await countKeys(`${prefix}:c:bloomorder:{missing:1}*`)).toBe(0)
    for (const p of [a!, b!]) {
      p.cache.close()
      p.client.disconnect()
    }
  })

  it('a gate that fails answers "maybe" (fail open): the loader runs', async () => {
    const gate: BloomGate = {
      mightContain: async () => {
        throw new Error('bloom down')
      },
    }
    const [p] = instances('bloomdown', gate)
    const value = await p!.cache.getOrLoad('present:1', async () => ({ id: 1 }))
    expect(value).toEqual({ id: 1 })
    p!.cache.close()
    p!.client.disconnect()
  })
})

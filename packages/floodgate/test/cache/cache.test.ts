import { setTimeout as sleep } from 'node:timers/promises'
import { Registry } from 'prom-client'
import { afterAll, describe, expect, it } from 'vitest'
import { L2Store } from '../../src/cache/l2/l2_store.js'
import {
  type CacheOptions,
  type CacheOutcome,
  CircuitBreaker,
  createCache,
  createRedisClient,
  InvalidArgumentError,
  KeySpace,
  notFound,
} from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('cache')
const clients: ReturnType<typeof createRedisClient>[] = []
const caches: { close(): void }[] = []

afterAll(async () => {
  for (const c of caches) c.close()
  for (const c of clients) c.disconnect()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

async function make<T>(name: string, options: Partial<CacheOptions<T>> = {}) {
  const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 })
  clients.push(client)
  const cache = createCache<T>({ redis: client, name, prefix, redisTimeoutMs: 1000, ...options })
  caches.push(cache)
  await cache.ready
  const outcomes: CacheOutcome[] = []
  cache.events.on('outcome', (e) => outcomes.push(e.outcome))
  return { cache, outcomes }
}

const valueKey = (name: string, key: string) => `${prefix}:c:${name}:{${key}}`

describe('createCache options', () => {
  it('validates and names the field', () => {
    const client = redis
    expect(() => createCache({ redis: client, name: 'bad name' })).toThrow(/name/)
    expect(() => createCache({ redis: client, name: 'x', ttlMs: { minMs: 10, maxMs: 5 } })).toThrow(
      InvalidArgumentError,
    )
    expect(() => createCache({ redis: client, name: 'x', negativeTtlMs: 0 })).toThrow(/negativeTtlMs/)
    expect(() => createCache({ redis: client, name: 'x', l1: { maxBytes: -1 } })).toThrow(/l1.maxBytes/)
  })

  it('rejects bad per-call options', async () => {
    const { cache } = await make<number>('callopts')
    await expect(cache.getOrLoad('k', () => 1, { lockWaitMs: 0 })).rejects.toThrow(/lockWaitMs/)
  })
})

describe('getOrLoad', () => {
  it('L1 → L2 → loader, and the L2 TTL is drawn in [min, max] + grace (ms)', async () => {
    const { cache, outcomes } = await make<string>('tiers', {
      ttlMs: { minMs: 100_000, maxMs: 200_000 },
      staleWhileRevalidateMs: 10_000,
    })
    let calls = 0
    const loader = async () => `v${++calls}`
    expect(await cache.getOrLoad('a', loader)).toBe('v1')
    expect(await cache.getOrLoad('a', loader)).toBe('v1')
    const other = (await make<string>('tiers')).cache
    expect(await other.getOrLoad('a', loader)).toBe('v1')
    expect(calls).toBe(1)
    expect(outcomes).toEqual(['load', 'l1_hit'])
    const pttls = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        await cache.getOrLoad(`t${i}`, loader)
        // the fill runs behind the answer (fill.ts): wait for it to land
        await expect.poll(() => redis.exists(valueKey('tiers', `t${i}`))).toBe(1)
        return redis.pttl(valueKey('tiers', `t${i}`))
      }),
    )
    for (const pttl of pttls) {
      expect(pttl).toBeGreaterThan(105_000)
      expect(pttl).toBeLessThanOrEqual(210_000)
    }
    expect(new Set(pttls).size).toBeGreaterThan(1) // jittered, not fixed
  })

  it('never caches loader errors, and releases the lock so the next call loads at once', async () => {
    const { cache } = await make<string>('errors', { lockWaitMs: 5000, lockWaitJitterMs: 0 })
    await expect(
      cache.getOrLoad('e', async () => {
        throw new Error('db down')
      }),
    ).rejects.toThrow('db down')
    expect(await redis.exists(valueKey('errors', 'e'), `${valueKey('errors', 'e')}:lock`)).toBe(0)
    const started = Date.now()
    expect(await cache.getOrLoad('e', async () => 'ok')).toBe('ok')
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it('deletes a corrupt L2 entry, reloads, and emits corrupt instead of throwing', async () => {
    const { cache, outcomes } = await make<string>('corrupt', { l1: false })
    await redis.set(valueKey('corrupt', 'c'), 'fg1|v|99999999999999|0|{not json')
    expect(await cache.getOrLoad('c', async () => 'fresh')).toBe('fresh')
    expect(outcomes).toContain('corrupt')
    expect(outcomes).toContain('load')
    expect((await redis.get(valueKey('corrupt', 'c')))?.endsWith('"fresh"')).toBe(true)
  })

  it('caches not-found with its own TTL, and a real value replaces it', async () => {
    const { cache, outcomes } = await make<string>('neg', { negativeTtlMs: 5000, l1: false })
    let calls = 0
    const missing = async () => {
      calls++
      return notFound()
    }
    expect(await cache.getOrLoad('n', missing)).toBeUndefined()
    expect(await cache.getOrLoad('n', missing)).toBeUndefined()
    expect(calls).toBe(1)
    expect(outcomes.at(-1)).toBe('negative_hit')
    expect(await redis.pttl(valueKey('neg', 'n'))).toBeLessThanOrEqual(5000)
    await cache.set('n', 'now exists')
    expect(await cache.getOrLoad('n', async () => notFound())).toBe('now exists')
  })

  it('a waiter past its deadline loads without writing the cache (wait_timeout)', async () => {
    const slow = (await make<string>('deadline', { lockTtlMs: 5000 })).cache
    const { cache: impatient, outcomes } = await make<string>('deadline', {
      lockWaitMs: 300,
      lockWaitJitterMs: 50,
    })
    const holder = slow.getOrLoad('d', async () => {
      await sleep(1500)
      return 'from holder'
    })
    await sleep(100)
    const started = Date.now()
    expect(await impatient.getOrLoad('d', async () => 'direct')).toBe('direct')
    expect(Date.now() - started).toBeLessThan(1000)
    expect(outcomes).toEqual(['lock_wait', 'wait_timeout', 'load'])
    expect(await redis.exists(valueKey('deadline', 'd'))).toBe(0) // nothing written by the waiter
    expect(await holder).toBe('from holder')
    expect((await redis.get(valueKey('deadline', 'd')))?.endsWith('"from holder"')).toBe(true)
  })

  it('SWR: a failing refresh keeps serving stale and backs off before retrying', async () => {
    const { cache, outcomes } = await make<string>('swrfail', {
      ttlMs: 200,
      staleWhileRevalidateMs: 10_000,
      refreshBackoffMs: 1000,
      l1: false,
    })
    const errors: unknown[] = []
    cache.events.on('background_error', (e) => errors.push(e.error))
    let calls = 0
    const loader = async () => {
      calls++
      if (calls > 1) throw new Error('db down')
      return 'good'
    }
    expect(await cache.getOrLoad('s', loader)).toBe('good')
    await sleep(300)
    for (let i = 0; i < 5; i++) {
      expect(await cache.getOrLoad('s', loader)).toBe('good')
      await sleep(50)
    }
    expect(calls).toBe(2) // one failed refresh, then the back-off held further attempts
    expect(errors).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'stale_served')).toHaveLength(5)
  })
})

describe('L1 bounds', () => {
  it('holds at most maxEntries and at most maxBytes', async () => {
    const { cache } = await make<string>('bounds', { l1: { maxEntries: 5, maxBytes: 100_000 } })
    for (let i = 0; i < 20; i++) await cache.getOrLoad(`e${i}`, async () => 'x')
    expect(cache.local?.size).toBe(5)
    const small = (await make<string>('bytes', { l1: { maxEntries: 1000, maxBytes: 1000 } })).cache
    for (let i = 0; i < 20; i++) await small.getOrLoad(`b${i}`, async () => 'y'.repeat(200))
    expect(small.local?.bytes).toBeLessThanOrEqual(1000)
    expect(small.local?.size).toBeLessThan(20)
  })
})

describe('getManyOrLoad', () => {
  it('one MGET, one batch loader call for the misses only, not-found allowed', async () => {
    const a = (await make<number>('many')).cache
    const b = (await make<number>('many')).cache
    await a.getOrLoad('one', async () => 1) // in a's L1 and in L2
    const batches: string[][] = []
    const loader = async (keys: string[]) => {
      batches.push(keys)
      return new Map(keys.filter((k) => k !== 'ghost').map((k) => [k, k.length]))
    }
    const first = await b.getManyOrLoad(['one', 'three', 'ghost', 'three'], loader)
    expect(batches).toEqual([['three', 'ghost']])
    expect([...first.entries()]).toEqual([
      ['one', 1],
      ['three', 5],
      ['ghost', undefined],
    ])
    const second = await a.getManyOrLoad(['one', 'three', 'ghost'], loader)
    expect(batches).toHaveLength(1)
    expect(second.get('three')).toBe(5)
  })
})

describe('invalidate and set', () => {
  it('invalidate drops L2 and every instance L1 through the bus', async () => {
    const a = (await make<string>('bus')).cache
    const b = (await make<string>('bus')).cache
    await Promise.all([a.ready, b.ready])
    await a.getOrLoad('k', async () => 'old')
    await b.getOrLoad('k', async () => 'unused')
    expect(b.local?.get('k', Date.now())?.value).toBe('old')
    const result = await a.invalidate('k')
    expect(result).toEqual({ retrying: [], published: true })
    await sleep(100)
    expect(b.local?.get('k', Date.now())).toBeUndefined()
    expect(await redis.exists(valueKey('bus', 'k'))).toBe(0)
    await a.set('k', 'new')
    await sleep(100)
    expect(await b.getOrLoad('k', async () => 'unused')).toBe('new')
  })

  it('fills do not broadcast on the invalidation bus', async () => {
    const { cache } = await make<string>('quiet')
    await cache.ready
    const sub = testRedisClient()
    const seen: string[] = []
    await sub.subscribe(`${prefix}:c:quiet:invalidate`)
    sub.on('message', (_c, m) => seen.push(m))
    for (let i = 0; i < 10; i++) await cache.getOrLoad(`q${i}`, async () => 'v')
    await cache.invalidate('q0')
    await sleep(100)
    expect(seen).toHaveLength(1)
    sub.disconnect()
  })
})

describe('fill-4.lua negative NX semantics', () => {
  it('never overwrites a real value with the negative sentinel', async () => {
    const store = new L2Store(
      redis,
      new KeySpace(prefix),
      'c:nx',
      new CircuitBreaker(),
      { timeoutMs: 1000, maxWaitMs: 2000 },
      () => {},
      1,
    )
    await redis.set(`${prefix}:c:nx:{r}`, 'fg1|v|99999999999999|0|"real"')
    const neg = Buffer.from('fg1|n|99999999999999|0|')
    expect(await store.fill('r', neg, 5000, '0', '', 'nx')).toBe('value_present')
    expect(await redis.get(`${prefix}:c:nx:{r}`)).toBe('fg1|v|99999999999999|0|"real"')
    expect(await store.fill('absent', neg, 5000, '0', '', 'nx')).toBe('written')
    await redis.set(`${prefix}:c:nx:{r}:ver`, '4')
    expect(await store.fill('r', Buffer.from('x'), 5000, '3', '', 'set')).toBe('version_moved')
  })
})

describe('metrics', () => {
  it('exposes outcome counters and the breaker gauge in the given registry', async () => {
    const registry = new Registry()
    const { cache } = await make<string>('metrics', { registry })
    await cache.getOrLoad('m', async () => 'v')
    await cache.getOrLoad('m', async () => 'v')
    const text = await registry.metrics()
    expect(text).toMatch(/floodgate_cache_events_total\{cache="metrics",outcome="l1_hit"\} 1/)
    expect(text).toMatch(/floodgate_cache_events_total\{cache="metrics",outcome="load"\} 1/)
    expect(text).toMatch(/floodgate_cache_breaker_state\{cache="metrics"\} 0/)
    expect(text).toMatch(/floodgate_cache_load_duration_seconds_count\{cache="metrics"\} 1/)
  })
})

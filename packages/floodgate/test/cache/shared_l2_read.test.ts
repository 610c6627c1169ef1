import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Cache, createCache, floodgateRedisOptions } from '../../src/index.js'
import { commandCalls } from '../support/command_stats.js'
import { type ProxiedRedis, startProxiedRedis } from '../support/proxied_redis.js'

// A private redis-server: INFO commandstats counts exactly this file's GETs.
let redis: ProxiedRedis
let server: ProxiedRedis['server']
let admin: Redis
let proxy: ProxiedRedis['proxy']
const clients: Redis[] = []
const caches: Cache<string>[] = []

async function cacheOn(url: string): Promise<{ cache: Cache<string>; client: Redis }> {
  const client = new Redis(url, floodgateRedisOptions({ commandTimeoutMs: 5000 }))
  client.on('error', () => undefined)
  clients.push(client)
  // no L1: every read goes to L2, the tier under test; a 2 s deadline (default 50 ms idle) as
  // the proxy holds a reply ~150 ms on purpose, and a late reply must not turn into a load
  const cache = createCache<string>({
    redis: client,
    name: 'shared',
    prefix: 'sr',
    l1: false,
    redisTimeoutMs: 2000,
  })
  caches.push(cache)
  await cache.ready
  return { cache, client }
}

const loadNever = async (): Promise<string> => {
  throw new Error('the value is in L2: no load expected')
}

beforeAll(async () => {
  redis = await startProxiedRedis()
  ;({ server, admin, proxy } = redis)
})

afterAll(async () => {
  for (const cache of caches) cache.close()
  for (const client of clients) client.disconnect()
  await redis.close()
})

describe('L2 reads shared by concurrent calls', () => {
  it('50 concurrent getOrLoad of one key: one GET, each caller its own decoded value', async () => {
    const { cache } = await cacheOn(server.url)
    await cache.set('hot', 'v1')
    await admin.config('RESETSTAT')
    const values = await Promise.all(Array.from({ length: 50 }, () => cache.getOrLoad('hot', loadNever)))
    expect(new Set(values)).toEqual(new Set(['v1']))
    expect((await commandCalls(admin)).get).toBe(1)
    const objects = createCache<{ n: number }>({
      redis: clients[0]!,
      name: 'objects',
      prefix: 'sr',
      l1: false,
    })
    caches.push(objects as unknown as Cache<string>)
    await objects.set('o', { n: 1 })
    const [a, b] = await Promise.all([
      objects.getOrLoad('o', async () => ({ n: 0 })),
      objects.getOrLoad('o', async () => ({ n: 0 })),
    ])
    expect(a).toEqual({ n: 1 })
    expect(a).not.toBe(b) // a caller may change its copy
  })

  it('a read after an invalidation from another instance never joins a GET sent before it', async () => {
    // instance 1's data connection goes through the proxy, which holds its replies on demand
    const one = await cacheOn(proxy.url)
    const two = await cacheOn(server.url)
    await two.cache.set('k', 'v1')
    await one.client.client('SETNAME', 'shared-read-data')
    proxy.holdReplies('shared-read-data')
    const before = one.cache.getOrLoad('k', loadNever) // GET runs in Redis: v1; its reply is held
    await sleep(50)
    await two.cache.set('k', 'v2') // published on the bus, which instance 1 hears (not held)
    await sleep(100)
    const after = one.cache.getOrLoad('k', loadNever)
    proxy.releaseReplies()
    expect(await before).toBe('v1')
    expect(await after).toBe('v2')
  })

  it('a read after a write of this instance never joins a GET sent before the write', async () => {
    const one = await cacheOn(proxy.url)
    await one.cache.set('w', 'v1')
    await one.client.client('SETNAME', 'shared-read-own')
    proxy.holdReplies('shared-read-own')
    const before = one.cache.getOrLoad('w', loadNever) // GET runs: v1; reply held
    await new Promise(setImmediate) // the GET leaves (the L2 reads of a poll phase leave together)
    const written = one.cache.set('w', 'v2') // runs after that GET on the same connection
    await sleep(20) // the write is sent (its reply held too): a read from now on comes after it
    const after = one.cache.getOrLoad('w', loadNever) // a new GET, behind the write
    await sleep(50)
    proxy.releaseReplies()
    await written
    expect(await before).toBe('v1')
    expect(await after).toBe('v2')
  })
})

import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Cache, createCache, floodgateRedisOptions } from '../../src/index.js'
import { type ProxiedRedis, startProxiedRedis } from '../support/proxied_redis.js'

// A miss's caller is answered once its value is loaded; the fill (fill-4.lua) goes on behind it.
let redis: ProxiedRedis
let admin: Redis
let proxy: ProxiedRedis['proxy']
const clients: Redis[] = []
const caches: Cache<string>[] = []

/** A cache whose data connection goes through the proxy, named `name` so its replies can be held. */
async function cacheThroughProxy(name: string): Promise<Cache<string>> {
  const client = new Redis(proxy.url, floodgateRedisOptions()) // floodgate's defaults
  client.on('error', () => undefined)
  clients.push(client)
  // a 2 s Redis deadline (default 50 ms idle): a fill waited for answers after it; one behind the
  // answer within 1 s even on a busy machine
  const cache = createCache<string>({ redis: client, name: 'behind', prefix: name, redisTimeoutMs: 2000 })
  caches.push(cache)
  await cache.ready
  await client.client('SETNAME', name)
  return cache
}

const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'late'> =>
  Promise.race([promise, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms))])

beforeAll(async () => {
  redis = await startProxiedRedis()
  ;({ admin, proxy } = redis)
})

afterAll(async () => {
  for (const cache of caches) cache.close()
  for (const client of clients) client.disconnect()
  await redis.close()
})

describe('the fill of a miss runs behind its answer', () => {
  it('answers (and keeps the value in L1) while the fill reply is still out; L2 has it after', async () => {
    const cache = await cacheThroughProxy('fb-answer')
    const started = performance.now()
    const value = await within(
      cache.getOrLoad('k', async () => {
        // the claim's reply is in: from here on, this connection's replies are held
        proxy.holdReplies('fb-answer')
        return 'v1'
      }),
      1000,
    )
    const answeredMs = performance.now() - started
    expect(value).toBe('v1')
    expect(answeredMs).toBeLessThan(1000)
    expect(cache.getLocal('k')).toBe('v1')
    proxy.releaseReplies()
    await expect.poll(() => admin.exists('fb-answer:c:behind:{k}')).toBe(1)
    expect(await admin.exists('fb-answer:c:behind:{k}:lock')).toBe(0)
  })

  it('takes the value out of L1 when its fill finds a newer version (a write it did not hear of)', async () => {
    const cache = await cacheThroughProxy('fb-newer')
    const value = await cache.getOrLoad('k', async () => {
      proxy.holdReplies('fb-newer')
      // a write elsewhere whose invalidation this process missed: only the version moves
      await admin.incr('fb-newer:c:behind:{k}:ver')
      return 'old'
    })
    expect(value).toBe('old')
    expect(cache.getLocal('k')).toBe('old')
    proxy.releaseReplies()
    await expect.poll(() => cache.getLocal('k')).toBeUndefined()
    expect(await admin.exists('fb-newer:c:behind:{k}')).toBe(0)
  })
})

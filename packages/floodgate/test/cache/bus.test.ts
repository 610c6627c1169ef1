import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { createCache, createRedisClient } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'
import { PrivateRedis } from '../support/redis_server.js'

const redis = testRedisClient()
const prefix = uniquePrefix('bus')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('invalidation bus', () => {
  it('publishes the L1 invalidation even when the L2 step fails, and retries the L2 step', async () => {
    const clients = [0, 1].map(() => createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 }))
    const [a, b] = clients.map((client) =>
      createCache<string>({ redis: client, name: 'b', prefix, redisTimeoutMs: 1000, invalidateRetries: 2 }),
    ) as [ReturnType<typeof createCache<string>>, ReturnType<typeof createCache<string>>]
    await Promise.all([a.ready, b.ready])
    await a.getOrLoad('k', async () => 'v')
    await b.getOrLoad('k', async () => 'unused')
    expect(b.local?.get('k', Date.now())?.value).toBe('v')
    // Make invalidate-2.lua fail: the version key holds the wrong type, so INCR errors.
    await redis.hset(`${prefix}:c:b:{k}:ver`, 'x', '1')
    const givenUp: string[] = []
    a.events.on('background_error', (e) => givenUp.push(`${e.task}:${e.key}`))
    const result = await a.invalidate('k')
    expect(result).toEqual({ retrying: ['k'], published: true })
    await sleep(150)
    expect(b.local?.get('k', Date.now())).toBeUndefined() // the peer's L1 dropped it anyway
    const deadline = Date.now() + 3000 // retries after 100 ms and 200 ms, then it gives up
    while (givenUp.length === 0 && Date.now() < deadline) await sleep(20)
    expect(givenUp).toEqual(['invalidate:k'])
    for (const cache of [a, b]) cache.close()
    for (const client of clients) client.disconnect()
  })

  it('clears L1 after the subscriber reconnects (messages missed while away are unknown)', async () => {
    const server = await PrivateRedis.start()
    const client = createRedisClient(server.url, { commandTimeoutMs: 500 })
    client.on('error', () => {})
    const cache = createCache<string>({ redis: client, name: 'r', l1: { ttlMs: 60_000 } })
    await cache.ready
    await cache.getOrLoad('k', async () => 'v')
    expect(cache.local?.size).toBe(1)
    await server.kill()
    await server.start()
    const deadline = Date.now() + 8000
    while (cache.local?.size !== 0 && Date.now() < deadline) await sleep(50)
    expect(cache.local?.size).toBe(0)
    cache.close()
    client.disconnect()
    await server.destroy()
  }, 20_000)
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BloomGate, createCache, createRedisClient } from '../../src/index.js'
import { PrivateRedis } from '../support/redis_server.js'

let server: PrivateRedis

beforeAll(async () => {
  server = await PrivateRedis.start()
})
afterAll(async () => {
  await server.destroy()
})

describe('Bloom gate behind the L2 circuit breaker', () => {
  it('is not asked while the breaker is open (a black-holed Redis would cost every miss its timeout), and again once it closes', async () => {
    const redis = createRedisClient(server.url, { commandTimeoutMs: 500 })
    redis.on('error', () => {})
    const asked: string[][] = []
    // Stands for a gate on the same Redis; answers "absent" for `ghost:*` so its use is visible.
    const gate: BloomGate = {
      async mightContain(items) {
        asked.push([...items])
        return items.map((item) => !item.startsWith('ghost:'))
      },
    }
    const cache = createCache<string>({
      redis,
      name: 'gate',
      l1: false,
      bloom: gate,
      breaker: { failureThreshold: 2, coolDownMs: 600_000 },
    })
    await cache.ready
    const loads: string[] = []
    const loader = async (key: string) => {
      loads.push(key)
      return `v:${key}`
    }
    expect(await cache.getOrLoad('ghost:1', loader)).toBeUndefined()
    expect(asked).toEqual([['ghost:1']])

    await server.kill()
    for (let i = 0; cache.breaker.state === 'closed' && i < 10; i++)
      await cache.getOrLoad(`warm:${i}`, loader)
    expect(cache.breaker.state).toBe('open')
    asked.length = 0
    expect(await cache.getOrLoad('ghost:2', loader)).toBe('v:ghost:2') // fail open, like the gate itself
    expect(
      await cache.getManyOrLoad(['ghost:3', 'real:1'], async (keys) => keys.map((k) => `v:${k}`)),
    ).toEqual(
      new Map([
        ['ghost:3', 'v:ghost:3'],
        ['real:1', 'v:real:1'],
      ]),
    )
    expect(asked).toEqual([])

    await server.start()
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve))
    // the cache ends the (long on purpose) cool-down itself on 'ready'; the next read is the probe
    cache.breaker.probeNow()
    expect(await cache.getOrLoad('ghost:4', loader)).toBeUndefined()
    expect(asked).toEqual([['ghost:4']])
    cache.close()
    redis.disconnect()
  })
})

import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkEvictionPolicy } from '../../src/interactions/index.js'
import { createRedisClient } from '../../src/redis/index.js'
import { freePort, PrivateRedis } from '../support/redis_server.js'

let server: PrivateRedis
let client: Redis

beforeAll(async () => {
  server = await PrivateRedis.start()
  client = new Redis(server.url, { maxRetriesPerRequest: 0 })
  client.on('error', () => undefined)
})
afterAll(async () => {
  client.disconnect()
  await server.destroy()
})

describe('checkEvictionPolicy', () => {
  it('is safe only under noeviction', async () => {
    await client.config('SET', 'maxmemory-policy', 'noeviction')
    expect(await checkEvictionPolicy(client)).toEqual({ policies: ['noeviction'], safe: true })
    await client.config('SET', 'maxmemory-policy', 'volatile-lru')
    expect(await checkEvictionPolicy(client)).toEqual({ policies: ['volatile-lru'], safe: false })
    await client.config('SET', 'maxmemory-policy', 'allkeys-lru')
    expect((await checkEvictionPolicy(client)).safe).toBe(false)
  })

  it('reads the policy on a client that is not ready yet (floodgate clients have no offline queue)', async () => {
    await client.config('SET', 'maxmemory-policy', 'noeviction')
    // what main.ts did before waiting for ready: the first command right after creating the client
    const fresh = createRedisClient(server.url)
    fresh.on('error', () => undefined)
    expect(await checkEvictionPolicy(fresh)).toEqual({ policies: ['noeviction'], safe: true })
    fresh.disconnect()
  })

  it("reads the policy while Redis is slower than the client's 50 ms command timeout", async () => {
    const fast = createRedisClient(server.url) // commandTimeout 50 ms
    fast.on('error', () => undefined)
    await new Promise((resolve) => fast.once('ready', resolve))
    const blocker = new Redis(server.url)
    // Redis answers nothing for 300 ms (DEBUG SLEEP is disabled for non-local connections by default)
    const busy = blocker.eval(
      "local s = redis.call('TIME') repeat local n = redis.call('TIME') until (n[1] - s[1]) * 1e6 + n[2] - s[2] > 300000 return 1",
      0,
    )
    await sleep(20)
    expect(await checkEvictionPolicy(fast)).toEqual({ policies: ['noeviction'], safe: true })
    await busy
    blocker.disconnect()
    fast.disconnect()
  })

  it('answers unknown with the reason, without throwing, when Redis cannot be asked', async () => {
    await client.call('ACL', 'SETUSER', 'noconfig', 'on', 'nopass', '+@all', '-config', '~*')
    const limited = new Redis(server.url, { username: 'noconfig', password: 'x', maxRetriesPerRequest: 0 })
    const refused = await checkEvictionPolicy(limited)
    expect(refused).toMatchObject({ policies: [], safe: undefined })
    expect(refused.error).toMatch(/NOPERM/)
    limited.disconnect()

    const nowhere = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    })
    const started = Date.now()
    const dead = await checkEvictionPolicy(nowhere, { timeoutMs: 300 })
    expect(dead).toMatchObject({ policies: [], safe: undefined })
    expect(dead.error).toBeTruthy()
    expect(Date.now() - started).toBeLessThan(5000)
    nowhere.disconnect()
  })
})

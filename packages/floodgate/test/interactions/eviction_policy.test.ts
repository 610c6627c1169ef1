import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkEvictionPolicy } from '../../src/interactions/index.js'
import { PrivateRedis } from '../support/redis_server.js'

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

  it('answers unknown, without throwing, when Redis cannot be asked', async () => {
    const dead = new Redis(server.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    })
    expect(await checkEvictionPolicy(dead)).toEqual({ policies: [], safe: undefined })
    dead.disconnect()
  })
})

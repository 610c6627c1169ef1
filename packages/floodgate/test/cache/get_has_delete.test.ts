import { afterAll, describe, expect, it } from 'vitest'
import { createCache, createRedisClient, notFound } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('cache-get')
const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 })
const caches: { close(): void }[] = []

afterAll(async () => {
  for (const cache of caches) cache.close()
  client.disconnect()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

async function make(name: string) {
  const cache = createCache<string>({ redis: client, prefix, name, redisTimeoutMs: 1000 })
  caches.push(cache)
  await cache.ready
  return cache
}

describe('get, has, delete (no loader)', () => {
  it('get reads L1 then L2 without loading; has agrees; delete removes it everywhere', async () => {
    const writer = await make('videos')
    const reader = await make('videos') // another instance: its L1 is empty, L2 is shared
    expect(await reader.get('v1')).toBeUndefined()
    expect(await reader.has('v1')).toBe(false)

    await writer.set('v1', 'hello')
    expect(await reader.get('v1')).toBe('hello') // from L2
    expect(await reader.has('v1')).toBe(true)

    await writer.delete('v1')
    await expect.poll(() => reader.get('v1')).toBeUndefined()
    expect(await writer.has('v1')).toBe(false)
  })

  it('a negative entry reads as absent', async () => {
    const cache = await make('negative')
    expect(await cache.getOrLoad('gone', () => notFound())).toBeUndefined()
    expect(await cache.get('gone')).toBeUndefined()
    expect(await cache.has('gone')).toBe(false)
  })
})

import { afterAll, describe, expect, it, vi } from 'vitest'
import {
  type Cache,
  type CacheOptions,
  type CacheOutcome,
  createCache,
  createRedisClient,
  InvalidArgumentError,
  NOT_FOUND,
  notFound,
} from '../../src/index.js'
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

/** A cache and the outcomes it counts, in order. */
async function makeCounted(name: string, options: Partial<CacheOptions<{ n: number }>> = {}) {
  const cache: Cache<{ n: number }> = createCache({
    redis: client,
    prefix,
    name,
    redisTimeoutMs: 1000,
    ...options,
  })
  caches.push(cache)
  const outcomes: CacheOutcome[] = []
  cache.events.on('outcome', ({ outcome }) => outcomes.push(outcome))
  await cache.ready
  return { cache, outcomes }
}

describe('getLocal (getOrLoad’s L1 step, synchronous)', () => {
  it('answers what getOrLoad would, from L1 only, counted as the same l1_hit', async () => {
    const { cache, outcomes } = await makeCounted('local-values')
    expect(cache.getLocal('v1')).toBeUndefined()
    expect(outcomes).toEqual([]) // nothing counted: the caller goes on with getOrLoad
    const loaded = await cache.getOrLoad('v1', () => ({ n: 1 }))
    expect(outcomes).toEqual(['load'])
    const local = cache.getLocal('v1')
    expect(local).toEqual({ n: 1 })
    expect(local).toBe(await cache.getOrLoad('v1', () => ({ n: 2 }))) // the very object getOrLoad gives
    expect(local).toBe(loaded)
    expect(outcomes).toEqual(['load', 'l1_hit', 'l1_hit'])
  })

  it('a cached "not found" is NOT_FOUND (getOrLoad: undefined), counted as a negative_hit', async () => {
    const { cache, outcomes } = await makeCounted('local-negative')
    expect(await cache.getOrLoad('gone', () => notFound())).toBeUndefined()
    expect(cache.getLocal('gone')).toBe(NOT_FOUND)
    expect(await cache.getOrLoad('gone', () => ({ n: 1 }))).toBeUndefined()
    expect(outcomes).toEqual(['load', 'negative_hit', 'negative_hit'])
  })

  it('nothing once invalidated, when only L2 has it, or without L1', async () => {
    const { cache, outcomes } = await makeCounted('gone-from-l1')
    await cache.getOrLoad('v', () => ({ n: 1 }))
    await cache.invalidate('v')
    expect(cache.getLocal('v')).toBeUndefined()
    await cache.getOrLoad('w', () => ({ n: 2 })) // filled in L2 (set would publish an invalidation)
    const other = await makeCounted('gone-from-l1') // another instance: empty L1, same L2
    expect(other.cache.getLocal('w')).toBeUndefined()
    expect(await other.cache.getOrLoad('w', () => ({ n: 3 }))).toEqual({ n: 2 })
    expect(other.outcomes).toEqual(['l2_hit'])
    expect(other.cache.getLocal('w')).toEqual({ n: 2 })
    const bare = await makeCounted('gone-from-l1', { l1: false })
    expect(bare.cache.getLocal('w')).toBeUndefined()
    expect(bare.outcomes).toEqual([])
    expect(outcomes).toEqual(['load', 'load'])
  })

  it('in a namespace: nothing (and no Redis read) until its generation is known, then its own entries', async () => {
    const { cache } = await makeCounted('local-spaces')
    const sent = vi.spyOn(client, 'sendCommand')
    expect(cache.namespace('t1').getLocal('k')).toBeUndefined()
    expect(sent).not.toHaveBeenCalled() // synchronous: any command sent during the call is its own
    sent.mockRestore()
    await cache.namespace('t1').getOrLoad('k', () => ({ n: 1 }))
    expect(cache.namespace('t1').getLocal('k')).toEqual({ n: 1 })
    expect(cache.namespace('t2').getLocal('k')).toBeUndefined()
    expect(cache.getLocal('k')).toBeUndefined()
    await cache.namespace('t1').clear()
    expect(cache.namespace('t1').getLocal('k')).toBeUndefined()
  })

  it('refuses a key starting with \\0, as getOrLoad does', async () => {
    const { cache } = await makeCounted('local-bad-key')
    expect(() => cache.getLocal('\0x')).toThrow(InvalidArgumentError)
    await expect(cache.getOrLoad('\0x', () => ({ n: 1 }))).rejects.toThrow(InvalidArgumentError)
  })
})
